// Framing of a byte stream into DCE/RPC connection-oriented PDUs (MS-RPCE / C706 ch. 12), with no
// knowledge of the socket it comes from. The framer looks only at the 16-byte common header:
// rpc_vers must be 5, rpc_vers_minor 0, and frag_length (u16 at offset 8, byte order from
// drep[0] & 0x10) must lie in [16, max_pdu]. Everything else is the handler's business.
//
// A framer is a small value type with this shape, so another transport (e.g. smbd's named-pipe
// message mode with u16 length prefixes) can bring its own and reuse Connection<Stream, Framer>:
//   FrameResult next(ByteView buffered) const;  // inspect the unconsumed bytes
//   static constexpr size_t kOutPrefixSize;     // bytes put in front of every reply
//   void out_prefix(size_t reply_size, uint8_t* dst) const;  // writes kOutPrefixSize bytes
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/bytes.h"

namespace perfsim::server {

struct FrameResult {
  enum class Kind { kNeedMore, kComplete, kError };
  Kind kind = Kind::kNeedMore;
  size_t size = 0;            // kComplete: bytes the frame occupies; kNeedMore: bytes needed in total
  size_t payload_offset = 0;  // kComplete: where the PDU begins inside the frame
  std::string_view reason;    // kError: a log token such as "bad_frag_length"
  std::string detail;         // kError: what was seen, for a person
};

class DcerpcFramer {
 public:
  static constexpr size_t kHeaderSize = 16;
  static constexpr size_t kMaxPdu = 65535;  // frag_length is a u16
  static constexpr size_t kOutPrefixSize = 0;

  // max_pdu is clamped to [kHeaderSize, kMaxPdu].
  explicit DcerpcFramer(size_t max_pdu = kMaxPdu);

  FrameResult next(ByteView buffered) const;
  void out_prefix(size_t, uint8_t*) const {}
  size_t max_pdu() const { return max_pdu_; }

 private:
  size_t max_pdu_;
};

}  // namespace perfsim::server
