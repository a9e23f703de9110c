// The pcap import path after tshark (recorder/pcap_import.h): TCP segments of one connection are
// put back in order (tcp_stream.h), then cut as DCE/RPC + winreg (winreg_sniffer.h) or, when the
// first byte's low bit is set, as SMB2 whose named-pipe bytes go to one sniffer per open file
// (smb2_pipes.h). Segments: flags (bit 0 client -> server, bit 1 SYN), u32 sequence number,
// u16 payload length, payload.
#include <map>
#include <memory>

#include "fuzz/fuzz_input.h"
#include "recorder/smb2_pipes.h"
#include "recorder/tcp_stream.h"
#include "recorder/winreg_sniffer.h"

using namespace perfsim;
using namespace perfsim::recorder;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const bool smb = in.u8() & 1;

  WinregSniffer tcp("client -> server");
  std::map<FileId, std::unique_ptr<WinregSniffer>> pipes;
  Smb2PipeDemux demux([&](const FileId& fid, bool to_server, ByteView d, int64_t t) {
    auto& s = pipes[fid];
    if (!s) s = std::make_unique<WinregSniffer>("pipe");
    to_server ? s->from_client(d, t) : s->from_server(d, t);
  });
  TcpDirection dirs[2];
  int64_t time = 0;
  while (!in.empty()) {
    const uint8_t flags = in.u8();
    const uint32_t seq = in.u32();
    const ByteView payload = in.take(in.u16());
    const bool from_client = flags & 1;
    if (from_client && payload.size() >= 8) (void)Smb2PipeDemux::looks_like_smb(payload);
    dirs[from_client ? 0 : 1].add(seq, flags & 2, payload, ++time, [&](ByteView d, int64_t t) {
      if (smb)
        demux.feed(from_client, d, t);
      else
        from_client ? tcp.from_client(d, t) : tcp.from_server(d, t);
    });
  }
  for (TcpDirection& d : dirs) d.finish();
  (void)smb_stop_reason(demux.stopped());
  tcp.finish();
  for (auto& [fid, s] : pipes) s->finish();
  return 0;
}
