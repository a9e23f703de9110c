#include "server/winreg_handler.h"

namespace perfsim::server {

WinregHandler::WinregHandler(const rpc::AssociationConfig& cfg, std::shared_ptr<replayer::SimulatedHost> host)
    : assoc_(cfg), service_(std::move(host)) {}

Verdict WinregHandler::on_pdu(ByteView pdu, std::vector<Bytes>& out) {
  rpc::Step step = assoc_.process(pdu, [this](uint16_t opnum, ByteView in, Bytes& stub_out) {
    return service_.call(opnum, in, stub_out);
  });
  for (Bytes& b : step.replies) out.push_back(std::move(b));
  return step.close ? Verdict::kClose : Verdict::kContinue;
}

std::unique_ptr<ConnectionHandler> WinregHandlerFactory::create(const PeerInfo& peer) {
  rpc::AssociationConfig cfg = cfg_;
  if (cfg.secondary_address.empty()) {
    const size_t colon = peer.local.rfind(':');
    cfg.secondary_address = colon == std::string::npos ? std::string() : peer.local.substr(colon + 1);
  }
  return std::make_unique<WinregHandler>(cfg, host_);
}

}  // namespace perfsim::server
