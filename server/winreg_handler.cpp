#include "server/winreg_handler.h"
#include "windows/constants.h"

namespace perfsim::server {

WinregHandler::WinregHandler(const rpc::AssociationConfig& cfg, std::shared_ptr<replayer::SimulatedHost> host,
                             bool perf_data_allowed)
    : assoc_(cfg),
      service_(std::move(host)),
      call_([this](uint16_t opnum, ByteView in, ByteChain& out) { return call(opnum, in, out); }),
      perf_data_allowed_(perf_data_allowed) {}

uint32_t WinregHandler::call(uint16_t opnum, ByteView in, ByteChain& out) {
  if (opnum == winreg::kOpenHKPD && !perf_data_allowed_) {
    winreg::OpenHiveRequest req;
    if (!winreg::decode(in, req).ok()) return winreg::kFaultBadStubData;
    winreg::OpenHiveResponse resp;  // a zero handle, as Windows returns with an error
    resp.result = windows::kErrorAccessDenied;
    out = winreg::encode(resp);
    return 0;
  }
  return service_.call(opnum, in, out);
}

Verdict WinregHandler::on_pdu(ByteView pdu, std::vector<ByteChain>& out) {
  const size_t before = out.size();
  const bool close = assoc_.process(pdu, call_, out);
  const winreg::Service::Effects fx = service_.take_effects();
  if (fx.drop_connection) {  // the host vanished mid-call: no answer
    out.erase(out.begin() + std::ptrdiff_t(before), out.end());
    return Verdict::kClose;
  }
  delay_ = std::chrono::milliseconds(fx.delay_ms);
  return close ? Verdict::kClose : Verdict::kContinue;
}

std::unique_ptr<ConnectionHandler> WinregHandlerFactory::create(const PeerInfo& peer) {
  rpc::AssociationConfig cfg = cfg_;
  if (cfg.secondary_address.empty()) {
    const size_t colon = peer.local.rfind(':');
    cfg.secondary_address = colon == std::string::npos ? std::string() : peer.local.substr(colon + 1);
  }
  return std::make_unique<WinregHandler>(cfg, host_, perf_data_allowed_);
}

}  // namespace perfsim::server
