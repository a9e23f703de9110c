#include "server/framer.h"

#include <algorithm>

namespace perfsim::server {

namespace {

FrameResult need_more(size_t total) {
  FrameResult r;
  r.size = total;
  return r;
}

FrameResult error(std::string_view reason, std::string detail) {
  FrameResult r;
  r.kind = FrameResult::Kind::kError;
  r.reason = reason;
  r.detail = std::move(detail);
  return r;
}

}  // namespace

DcerpcFramer::DcerpcFramer(size_t max_pdu) : max_pdu_(std::clamp(max_pdu, kHeaderSize, kMaxPdu)) {}

FrameResult DcerpcFramer::next(ByteView b) const {
  // Reject a bad version as soon as its byte arrives: no need to wait for a garbage header.
  if (b.size() >= 1 && b[0] != 5) return error("bad_version", "rpc_vers " + std::to_string(b[0]));
  if (b.size() >= 2 && b[1] != 0) return error("bad_version", "rpc_vers_minor " + std::to_string(b[1]));
  if (b.size() < 10) return need_more(kHeaderSize);
  bool little_endian = (b[4] & 0x10) != 0;
  size_t frag_length = little_endian ? load_le16(&b[8]) : size_t((b[8] << 8) | b[9]);
  if (frag_length < kHeaderSize || frag_length > max_pdu_)
    return error("bad_frag_length",
                 "frag_length " + std::to_string(frag_length) + " outside [16, " + std::to_string(max_pdu_) + "]");
  if (b.size() < frag_length) return need_more(frag_length);
  FrameResult r;
  r.kind = FrameResult::Kind::kComplete;
  r.size = frag_length;
  return r;
}

}  // namespace perfsim::server
