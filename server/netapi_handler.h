// \PIPE\srvsvc and \PIPE\wkssvc of a simulated host over SMB (netapi/): the DCE/RPC association
// bound to that pipe's interface, answering from the host's identity (name, Windows version).
#pragma once
#include <memory>

#include "netapi/service.h"
#include "rpc/association.h"
#include "server/handler.h"

namespace perfsim::server {

class NetapiHandler final : public ConnectionHandler {
 public:
  NetapiHandler(netapi::Pipe pipe, const netapi::HostIdentity& host);
  Verdict on_pdu(ByteView pdu, std::vector<ByteChain>& out) override;
  std::string take_auth_error() override { return assoc_.take_auth_error(); }

 private:
  rpc::Association assoc_;
  rpc::CallHandler call_;
};

class NetapiHandlerFactory final : public HandlerFactory {
 public:
  NetapiHandlerFactory(netapi::Pipe pipe, netapi::HostIdentity host) : pipe_(pipe), host_(std::move(host)) {}
  std::unique_ptr<ConnectionHandler> create(const PeerInfo&) override {
    return std::make_unique<NetapiHandler>(pipe_, host_);
  }

 private:
  netapi::Pipe pipe_;
  netapi::HostIdentity host_;
};

}  // namespace perfsim::server
