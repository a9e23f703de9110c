// \PIPE\srvsvc and \PIPE\wkssvc of a simulated host over SMB (netapi/): the generic RpcHandler
// over that pipe's interface table, answering from the host's identity (name, Windows version).
#pragma once
#include <memory>
#include <utility>

#include "netapi/service.h"
#include "server/handler.h"
#include "server/rpc_handler.h"

namespace perfsim::server {

class NetapiHandlerFactory final : public HandlerFactory {
 public:
  NetapiHandlerFactory(netapi::Pipe pipe, netapi::HostIdentity host) : pipe_(pipe), host_(std::move(host)) {}
  std::unique_ptr<ConnectionHandler> create(const PeerInfo&) override;

 private:
  netapi::Pipe pipe_;
  netapi::HostIdentity host_;
};

}  // namespace perfsim::server
