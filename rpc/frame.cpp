#include "rpc/frame.h"

#include <string>

#include "rpc/pdu.h"

namespace perfsim::rpc {

Status next_pdu_length(ByteView buffered, size_t max_frag_length, size_t& length) {
  length = 0;
  if (buffered.size() < kFramePrefix) return Status::Ok();
  if (buffered[0] != 5 || buffered[1] > 1)
    return Status::Unsupported("at offset 0: not DCE/RPC 5.x (version " + std::to_string(buffered[0]) + "." +
                               std::to_string(buffered[1]) + ")");
  bool le = (buffered[4] & 0xf0) == kDrepLittleEndian;
  size_t frag = le ? load_le16(&buffered[8]) : size_t(buffered[8]) << 8 | buffered[9];
  if (frag < kHeaderSize || frag > max_frag_length)
    return Status::Corruption("at offset 8: frag_length " + std::to_string(frag) + " outside [16, " +
                              std::to_string(max_frag_length) + "]");
  length = frag;
  return Status::Ok();
}

}  // namespace perfsim::rpc
