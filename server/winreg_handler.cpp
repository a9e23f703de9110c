#include "server/winreg_handler.h"

#include <algorithm>
#include <cstdint>

#include "windows/os.h"

namespace perfsim::server {

rpc::AssociationConfig tcp_association(rpc::AssociationConfig base, const replayer::SimulatedHost& host) {
  base.require_auth = base.require_auth || host.quirks().restrict_remote_clients;
  return base;
}

rpc::NtlmTarget ntlm_target(const replayer::SimulatedHost& host) {
  rpc::NtlmTarget t;
  t.computer = host.netbios_name();
  const windows::OsProfile* os = host.options().identity.os;
  const bool vista_on = os && os->major >= 6;
  t.timestamp = vista_on;
  t.version.reset();
  if (os && (os->major > 5 || (os->major == 5 && os->minor >= 1))) {
    uint32_t build = 0;
    for (char c : os->build) build = (c >= '0' && c <= '9' && build < 100000) ? build * 10 + uint32_t(c - '0') : build;
    if (build > 0 && build <= 0xffff)
      t.version = rpc::NtlmVersion{uint8_t(os->major), uint8_t(os->minor), uint16_t(build)};
  }
  return t;
}

std::unique_ptr<ConnectionHandler> WinregHandlerFactory::create(const PeerInfo& peer) {
  rpc::AssociationConfig cfg = tcp_ ? tcp_association(cfg_, *host_) : cfg_;
  if (cfg.secondary_address.empty()) {
    const size_t colon = peer.local.rfind(':');
    cfg.secondary_address = colon == std::string::npos ? std::string() : peer.local.substr(colon + 1);
  }
  std::unique_ptr<journal::SessionTap> tap =
      recorder_ ? recorder_->open_session(host_->name(), peer.remote, transport_) : nullptr;
  return std::make_unique<WinregHandler>(cfg, host_, access_, std::move(tap));
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
