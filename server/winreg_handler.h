// The protocol stack behind one connection: DCE/RPC association (rpc/) over the winreg service
// (winreg/) over a simulated host (replayer/). The transport hands it PDUs through the
// ConnectionHandler seam; the same stack serves TCP and, later, SMB named pipes.
#pragma once
#include <memory>
#include <string>
#include <utility>

#include "journal/recorder.h"
#include "replayer/host.h"
#include "rpc/association.h"
#include "server/handler.h"
#include "winreg/service.h"

namespace perfsim::server {

// perf_data_allowed false: OpenHKPD answers WERR_ACCESS_DENIED, as Windows does for accounts
// outside Administrators / Performance Monitor Users (the SMB transport decides per account).
class WinregHandler final : public ConnectionHandler {
 public:
  // tap: where each call's CallEvent goes (journal, metrics); null: nowhere, and nothing is noted.
  WinregHandler(const rpc::AssociationConfig& cfg, std::shared_ptr<replayer::SimulatedHost> host,
                bool perf_data_allowed = true, std::unique_ptr<journal::SessionTap> tap = nullptr);
  Verdict on_pdu(ByteView pdu, std::vector<ByteChain>& out) override;
  std::string take_auth_error() override { return assoc_.take_auth_error(); }
  std::chrono::milliseconds reply_delay() override { return std::exchange(delay_, std::chrono::milliseconds(0)); }

 private:
  uint32_t call(uint16_t opnum, ByteView in, ByteChain& out);
  uint32_t dispatch(uint16_t opnum, ByteView in, ByteChain& out);
  void observe(uint16_t opnum, uint32_t fault, int64_t wall_us, std::chrono::steady_clock::duration took);

  rpc::Association assoc_;
  winreg::Service service_;
  rpc::GatherCallHandler call_;         // bound to call() once, not per PDU
  std::chrono::milliseconds delay_{0};  // the host's latency for the last PDU's answers
  bool perf_data_allowed_;
  std::unique_ptr<journal::SessionTap> tap_;
};

// The association config of a host's ncacn_ip_tcp listener: `base`, with require_auth switched on
// by the restrict-remote-clients quirk in force now (host.quirks(), which the admin API can
// replace). Windows exempts named pipes from that policy, so the SMB pipe keeps `base`.
rpc::AssociationConfig tcp_association(rpc::AssociationConfig base, const replayer::SimulatedHost& host);

class WinregHandlerFactory final : public HandlerFactory {
 public:
  // secondary_address: what BIND_ACK names (the port over TCP, "\\PIPE\\winreg" over SMB); empty
  // means "the local port of the connection".
  WinregHandlerFactory(std::shared_ptr<replayer::SimulatedHost> host, rpc::AssociationConfig cfg = {},
                       bool perf_data_allowed = true)
      : host_(std::move(host)), cfg_(std::move(cfg)), perf_data_allowed_(perf_data_allowed) {}
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
  bool perf_data_allowed_;
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
