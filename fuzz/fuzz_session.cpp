// A whole winreg connection: the input cut into PDUs and fed to the protocol stack a served
// connection runs (DCE/RPC association, winreg service, simulated host of the bundled
// default-2022 capture on a stepping timeline). When the first byte is odd a well-formed bind
// goes first, so the mutations spend their time on winreg calls; its bits 1-2 choose the account's
// winreg::Access. Then the logon policy's promise is checked against the same requests: a null
// session's service (Access::kNone) holds no handle after any of them (issue 54).
#include <array>
#include <memory>

#include "captures/reader.h"
#include "fuzz/fuzz_input.h"
#include "fuzz/fuzz_recording.h"
#include "replayer/host.h"
#include "rpc/frame.h"
#include "rpc/pdu.h"
#include "server/winreg_handler.h"
#include "winreg/service.h"

using namespace perfsim;

namespace {

Bytes bind_pdu() {
  rpc::Bind b;
  b.max_xmit_frag = b.max_recv_frag = 4280;
  b.contexts.push_back({0, rpc::winreg_syntax(), {rpc::ndr20_syntax()}});
  return rpc::build_bind(rpc::PType::kBind, 1, b);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const uint8_t flags = in.u8();
  const bool bind_first = flags & 1;
  constexpr std::array kAccess{winreg::Access::kPerfData, winreg::Access::kRegistry, winreg::Access::kNone,
                               winreg::Access::kPerfData};
  const ByteView stream = in.rest();

  std::shared_ptr<replayer::SimulatedHost> host;
  fuzz::require(
      replayer::SimulatedHost::create(fuzz::default_recording(), {replayer::TimelineMode::kStep, 0}, host).ok());
  rpc::AssociationConfig cfg;
  cfg.max_request_stub = 256 * 1024;
  server::WinregHandler handler(cfg, host, kAccess[(flags >> 1) & 3]);
  std::vector<ByteChain> out;
  if (bind_first) fuzz::require(handler.on_pdu(bind_pdu(), out) == server::Verdict::kContinue);
  size_t off = 0;
  while (off < stream.size()) {
    size_t len = 0;
    if (!rpc::next_pdu_length(stream.subspan(off), 0xffff, len).ok() || len == 0 || len > stream.size() - off) break;
    out.clear();
    if (handler.on_pdu(stream.subspan(off, len), out) != server::Verdict::kContinue) break;
    off += len;
  }
  winreg::Service null_session(host, winreg::Access::kNone);
  for (off = 0; off < stream.size();) {
    size_t len = 0;
    if (!rpc::next_pdu_length(stream.subspan(off), 0xffff, len).ok() || len == 0 || len > stream.size() - off) break;
    const ByteView pdu = stream.subspan(off, len);
    off += len;
    rpc::Header h;
    rpc::Request r;
    if (!rpc::parse_header(pdu, h).ok() || h.ptype != rpc::PType::kRequest || !rpc::parse_request(pdu, h, r).ok())
      continue;
    ByteChain reply;
    null_session.call(r.opnum, r.stub, reply);
    fuzz::require(null_session.open_handles() == 0);
  }
  return 0;
}
