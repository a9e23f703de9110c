// smbd's named-pipe handshake (server/npa.h): framing and decoding of the request, then the
// message-mode framing of what follows it.
#include "fuzz/fuzz_input.h"
#include "server/npa.h"

using namespace perfsim;
namespace npa = perfsim::server::npa;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ByteView in(data, size);
  npa::Request req;
  (void)npa::parse_request(in, req);
  const server::FrameResult f = npa::frame_request(in);
  ByteView rest = in;
  if (f.kind == server::FrameResult::Kind::kComplete && f.size <= size) {
    npa::Request framed;
    if (npa::parse_request(in.first(f.size), framed).ok())
      fuzz::require(npa::encode_reply(framed.level).size() == npa::kReplySize);
    rest = in.subspan(f.size);
  }
  const npa::MessageFramer framer;
  while (!rest.empty()) {
    const server::FrameResult m = framer.next(rest);
    if (m.kind != server::FrameResult::Kind::kComplete || m.size == 0 || m.size > rest.size()) break;
    rest = rest.subspan(m.size);
  }
  return 0;
}
