#include "server/rpc_handler.h"

#include <algorithm>
#include <cstdint>

#include "replayer/host.h"

namespace perfsim::server {
namespace {

rpc::AssociationConfig bound_to(rpc::AssociationConfig cfg, const rpc::Interface& iface) {
  cfg.interface = iface.syntax;
  return cfg;
}

}  // namespace

RpcHandler::RpcHandler(rpc::AssociationConfig cfg, const rpc::Interface& iface,
                       std::unique_ptr<rpc::InterfaceSession> session, std::unique_ptr<journal::SessionTap> tap)
    : assoc_(bound_to(std::move(cfg), iface)), iface_(iface), session_(std::move(session)), tap_(std::move(tap)) {
  session_->observe(tap_ != nullptr);
}

// The journal hook: every executed call of an observed session becomes one CallEvent.
uint32_t RpcHandler::call(uint16_t opnum, ByteView in, ByteChain& out) {
  if (!tap_) return iface_.call(*session_, opnum, in, out);
  const int64_t wall_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  const auto t0 = std::chrono::steady_clock::now();
  const uint32_t fault = iface_.call(*session_, opnum, in, out);
  observe(opnum, fault, wall_us, std::chrono::steady_clock::now() - t0);
  return fault;
}

void RpcHandler::observe(uint16_t opnum, uint32_t fault, int64_t wall_us, std::chrono::steady_clock::duration took) {
  rpc::CallNote n = session_->take_call();
  for (rpc::CallNote::Happening& h : n.happened) tap_->record_host_event(std::move(h.what_json), h.time_us);
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
  e.closed = n.closed;
  const int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(took).count() + int64_t(n.delay_ms) * 1000;
  e.latency_us = uint32_t(std::min<int64_t>(us, UINT32_MAX));
  if (n.applied) e.applied = replayer::applied_names(n.applied);
  tap_->record(std::move(e), n.applied, std::move(n.answer));
}

Verdict RpcHandler::on_pdu(ByteView pdu, std::vector<ByteChain>& out) {
  const size_t before = out.size();
  auto call = [this](uint16_t opnum, ByteView in, ByteChain& stub) { return this->call(opnum, in, stub); };
  const bool close = assoc_.serve(pdu, rpc::CallRef(call), out);
  const rpc::CallEffects fx = session_->take_effects();
  if (fx.drop_connection) {  // the host vanished mid-call: no answer, the connection reset
    out.erase(out.begin() + std::ptrdiff_t(before), out.end());
    return Verdict::kReset;
  }
  delay_ = std::chrono::milliseconds(fx.delay_ms);
  return close ? Verdict::kClose : Verdict::kContinue;
}

}  // namespace perfsim::server
