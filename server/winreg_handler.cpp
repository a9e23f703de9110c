#include "server/winreg_handler.h"
#include "windows/constants.h"

#include <algorithm>
#include <cstdint>

namespace perfsim::server {

WinregHandler::WinregHandler(const rpc::AssociationConfig& cfg, std::shared_ptr<replayer::SimulatedHost> host,
                             bool perf_data_allowed, std::unique_ptr<journal::SessionTap> tap)
    : assoc_(cfg),
      service_(std::move(host)),
      call_([this](uint16_t opnum, ByteView in, ByteChain& out) { return call(opnum, in, out); }),
      perf_data_allowed_(perf_data_allowed),
      tap_(std::move(tap)) {
  service_.observe(tap_ != nullptr);
}

uint32_t WinregHandler::call(uint16_t opnum, ByteView in, ByteChain& out) {
  if (!tap_) return dispatch(opnum, in, out);
  const int64_t wall_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  const auto t0 = std::chrono::steady_clock::now();
  const uint32_t fault = dispatch(opnum, in, out);
  observe(opnum, fault, wall_us, std::chrono::steady_clock::now() - t0);
  return fault;
}

void WinregHandler::observe(uint16_t opnum, uint32_t fault, int64_t wall_us, std::chrono::steady_clock::duration took) {
  winreg::CallNote n = service_.take_call();
  journal::CallEvent e;
  e.time_us = wall_us;
  e.opnum = opnum;
  e.value_name = std::move(n.value_name);
  e.key_path = std::move(n.key_path);
  e.has_buffer = n.has_buffer;
  e.offered = n.offered;
  e.status = n.status;
  e.type = n.type;
  e.size = n.size;
  e.bytes = n.bytes;
  e.rpc_fault = fault;
  const int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(took).count() + int64_t(n.delay_ms) * 1000;
  e.latency_us = uint32_t(std::min<int64_t>(us, UINT32_MAX));
  if (n.applied) e.applied = replayer::applied_names(n.applied);
  tap_->record(std::move(e), n.applied);
}

uint32_t WinregHandler::dispatch(uint16_t opnum, ByteView in, ByteChain& out) {
  if (opnum == winreg::kOpenHKPD && !perf_data_allowed_) {
    winreg::OpenHiveRequest req;
    if (!winreg::decode(in, req).ok()) return winreg::kFaultBadStubData;
    winreg::OpenHiveResponse resp;  // a zero handle, as Windows returns with an error
    resp.result = windows::kErrorAccessDenied;
    out = winreg::encode(resp);
    service_.noted_elsewhere(resp.result);
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

rpc::AssociationConfig tcp_association(rpc::AssociationConfig base, const replayer::SimulatedHost& host) {
  base.require_auth = base.require_auth || host.quirks().restrict_remote_clients;
  return base;
}

std::unique_ptr<ConnectionHandler> WinregHandlerFactory::create(const PeerInfo& peer) {
  rpc::AssociationConfig cfg = tcp_ ? tcp_association(cfg_, *host_) : cfg_;
  if (cfg.secondary_address.empty()) {
    const size_t colon = peer.local.rfind(':');
    cfg.secondary_address = colon == std::string::npos ? std::string() : peer.local.substr(colon + 1);
  }
  std::unique_ptr<journal::SessionTap> tap =
      recorder_ ? recorder_->open_session(host_->name(), peer.remote, transport_) : nullptr;
  return std::make_unique<WinregHandler>(cfg, host_, perf_data_allowed_, std::move(tap));
}

Status make_recorder(size_t journal_size, const std::string& journal_file, std::shared_ptr<journal::Recorder>& out,
                     const journal::FileLimits& limits) {
  journal::RecorderOptions o;
  o.journal_size = journal_size;
  o.journal_file = journal_file;
  o.journal_limits = limits;
  o.applied_names.resize(replayer::kAppliedBits);
  for (uint32_t i = 0; i < replayer::kAppliedBits; ++i)
    o.applied_names[i] = std::string(replayer::applied_name(1u << i));
  return journal::Recorder::create(o, out);
}

}  // namespace perfsim::server
