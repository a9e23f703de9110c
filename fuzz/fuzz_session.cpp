// A whole winreg connection: the input cut into PDUs and fed to the protocol stack a served
// connection runs (DCE/RPC association, winreg service, simulated host of the bundled
// default-2022 capture on a stepping timeline). When the first byte is odd a well-formed bind
// goes first, so the mutations spend their time on winreg calls.
#include <memory>

#include "captures/reader.h"
#include "fuzz/fuzz_input.h"
#include "fuzz/fuzz_recording.h"
#include "replayer/host.h"
#include "rpc/frame.h"
#include "server/winreg_handler.h"

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
  const bool bind_first = in.u8() & 1;
  const ByteView stream = in.rest();

  std::shared_ptr<replayer::SimulatedHost> host;
  fuzz::require(
      replayer::SimulatedHost::create(fuzz::default_recording(), {replayer::TimelineMode::kStep, 0}, host).ok());
  rpc::AssociationConfig cfg;
  cfg.max_request_stub = 256 * 1024;
  server::WinregHandler handler(cfg, host);
  std::vector<ByteChain> out;
  if (bind_first) fuzz::require(handler.on_pdu(bind_pdu(), out) == server::Verdict::kContinue);
  size_t off = 0;
  while (off < stream.size()) {
    size_t len = 0;
    if (!rpc::next_pdu_length(stream.subspan(off), 0xffff, len).ok() || len == 0 || len > stream.size() - off) break;
    out.clear();
    if (handler.on_pdu(stream.subspan(off, len), out) == server::Verdict::kClose) break;
    off += len;
  }
  return 0;
}
