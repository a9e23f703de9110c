// winreg connections of a simulated host: the handler factory a TCP listener or the SMB pipe
// router uses (the generic RpcHandler over winreg's table, server/rpc_handler.h), the TCP
// association policy of the restrict-remote-clients quirk, and a serve run's journal recorder.
#pragma once
#include <memory>
#include <string>
#include <utility>

#include "journal/recorder.h"
#include "replayer/host.h"
#include "server/handler.h"
#include "server/rpc_handler.h"
#include "winreg/service.h"

namespace perfsim::server {

// The winreg stack of one connection: the generic RpcHandler over winreg's interface table and a
// winreg::Service of the host (tests, fuzz targets and benches build it directly).
// access: what the connection's account may open (winreg::Access; winreg::Service decides what it
// means, the SMB transport says which account connected).
class WinregHandler final : public RpcHandler {
 public:
  // tap: where each call's CallEvent goes (journal, metrics); null: nowhere, and nothing is noted.
  WinregHandler(const rpc::AssociationConfig& cfg, std::shared_ptr<replayer::SimulatedHost> host,
                winreg::Access access = winreg::Access::kPerfData, std::unique_ptr<journal::SessionTap> tap = nullptr)
      : RpcHandler(cfg, winreg::winreg_interface(), std::make_unique<winreg::Service>(std::move(host), access),
                   std::move(tap)) {}
};

// The association config of a host's ncacn_ip_tcp listener: `base`, with require_auth switched on
// by the restrict-remote-clients quirk in force now (host.quirks(), which the admin API can
// replace). Windows exempts named pipes from that policy, so the SMB pipe keeps `base`.
rpc::AssociationConfig tcp_association(rpc::AssociationConfig base, const replayer::SimulatedHost& host);

// The host the NTLMSSP CHALLENGE names (rpc/ntlm_server.h): its NetBIOS name and its Windows'
// version and build (windows/os.h). No VERSION for Windows 2000 and older, which lack the field,
// nor for a capture of no known OS (nothing to say rather than an invented version); a timestamp
// in TargetInfo from Vista/2008 (6.0) on (MS-NLMP 2.2.2.1, its note on MsvAvTimestamp).
rpc::NtlmTarget ntlm_target(const replayer::SimulatedHost& host);

class WinregHandlerFactory final : public HandlerFactory {
 public:
  // secondary_address: what BIND_ACK names (the port over TCP, "\\PIPE\\winreg" over SMB); empty
  // means "the local port of the connection".
  WinregHandlerFactory(std::shared_ptr<replayer::SimulatedHost> host, rpc::AssociationConfig cfg = {},
                       winreg::Access access = winreg::Access::kPerfData)
      : host_(std::move(host)), cfg_(std::move(cfg)), access_(access) {
    cfg_.ntlm_target = ntlm_target(*host_);
  }
  std::unique_ptr<ConnectionHandler> create(const PeerInfo& peer) override;
  const std::shared_ptr<replayer::SimulatedHost>& host() const { return host_; }
  // Connections are ncacn_ip_tcp ones: each new one takes tcp_association() of the quirks then in
  // force, so a restrict-remote-clients change applies from the next connection on.
  void serve_tcp() { tcp_ = true; }
  // Every handler made from now on feeds `r` (journal and metrics), labelled with `t`.
  void observe(std::shared_ptr<journal::Recorder> r, journal::Transport t) {
    recorder_ = std::move(r);
    transport_ = t;
  }

 private:
  std::shared_ptr<replayer::SimulatedHost> host_;
  rpc::AssociationConfig cfg_;
  winreg::Access access_;
  bool tcp_ = false;
  std::shared_ptr<journal::Recorder> recorder_;
  journal::Transport transport_ = journal::Transport::kTcp;
};

// A serve run's recorder: a journal of `journal_size` events (0: none), written to `journal_file`
// when given (capped and rotated by `limits`), and metrics labelling the replayer's quirks and
// faults by name.
Status make_recorder(size_t journal_size, const std::string& journal_file, std::shared_ptr<journal::Recorder>& out,
                     const journal::FileLimits& limits = {});

}  // namespace perfsim::server
