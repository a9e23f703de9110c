#include "server/netapi_handler.h"

namespace perfsim::server {

std::unique_ptr<ConnectionHandler> NetapiHandlerFactory::create(const PeerInfo&) {
  rpc::AssociationConfig cfg;  // the interface comes from the table (RpcHandler)
  cfg.secondary_address = pipe_ == netapi::Pipe::kSrvsvc ? "\\PIPE\\srvsvc" : "\\PIPE\\wkssvc";
  return std::make_unique<RpcHandler>(std::move(cfg), netapi::interface_of(pipe_),
                                      std::make_unique<netapi::Service>(host_));
}

}  // namespace perfsim::server
