// The one connection handler of every RPC interface: a DCE/RPC association (rpc/) bound to an
// interface table (rpc/interface.h) and that interface's per-association session, plus the
// journal hook. The transport hands it PDUs through the ConnectionHandler seam; the same handler
// serves TCP and smbd's named pipes, winreg, the endpoint mapper, srvsvc and wkssvc alike
// (Samba's dcesrv_core does the same for every dcesrv_interface).
#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <utility>

#include "journal/recorder.h"
#include "rpc/association.h"
#include "rpc/interface.h"
#include "server/handler.h"

namespace perfsim::server {

class RpcHandler : public ConnectionHandler {
 public:
  // The association answers binds for `iface.syntax` (cfg.interface is set from it). tap: where
  // each call's CallEvent goes (journal, metrics); null: nowhere, and the session notes nothing.
  RpcHandler(rpc::AssociationConfig cfg, const rpc::Interface& iface, std::unique_ptr<rpc::InterfaceSession> session,
             std::unique_ptr<journal::SessionTap> tap = nullptr);
  Verdict on_pdu(ByteView pdu, std::vector<ByteChain>& out) final;
  std::string take_auth_error() final { return assoc_.take_auth_error(); }
  std::chrono::milliseconds reply_delay() final { return std::exchange(delay_, std::chrono::milliseconds(0)); }
  const rpc::Association& association() const { return assoc_; }
  // Untrusted only where the association requires authentication and has none yet.
  bool trusted() const final { return !assoc_.config().require_auth || assoc_.authenticated(); }

 private:
  uint32_t call(uint16_t opnum, ByteView in, ByteChain& out);
  void observe(uint16_t opnum, uint32_t fault, int64_t wall_us, std::chrono::steady_clock::duration took);

  rpc::Association assoc_;
  const rpc::Interface& iface_;
  std::unique_ptr<rpc::InterfaceSession> session_;
  std::unique_ptr<journal::SessionTap> tap_;
  std::chrono::milliseconds delay_{0};  // the session's latency for the last PDU's answers
};

}  // namespace perfsim::server
