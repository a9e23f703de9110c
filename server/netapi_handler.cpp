#include "server/netapi_handler.h"

namespace perfsim::server {
namespace {

rpc::AssociationConfig config_for(netapi::Pipe pipe) {
  rpc::AssociationConfig cfg;
  const bool srvsvc = pipe == netapi::Pipe::kSrvsvc;
  cfg.interface = srvsvc ? netapi::srvsvc_syntax() : netapi::wkssvc_syntax();
  cfg.secondary_address = srvsvc ? "\\PIPE\\srvsvc" : "\\PIPE\\wkssvc";
  return cfg;
}

}  // namespace

NetapiHandler::NetapiHandler(netapi::Pipe pipe, const netapi::HostIdentity& host)
    : assoc_(config_for(pipe)), call_([pipe, host](uint16_t opnum, ByteView in, Bytes& out) {
        return netapi::call(pipe, host, opnum, in, out);
      }) {}

Verdict NetapiHandler::on_pdu(ByteView pdu, std::vector<ByteChain>& out) {
  rpc::Step s = assoc_.process(pdu, call_);
  for (Bytes& b : s.replies) out.emplace_back(std::move(b));
  return s.close ? Verdict::kClose : Verdict::kContinue;
}

}  // namespace perfsim::server
