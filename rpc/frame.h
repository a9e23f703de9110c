// Splits a connection-oriented DCE/RPC byte stream into PDUs: tells a transport how many bytes
// the next PDU occupies, using frag_length at offset 8 in the sender's byte order (drep).
// Guarantees: never reads past `buffered`; rejects a stream that cannot be DCE/RPC (wrong
// version, frag_length shorter than a header or above the caller's limit) before the caller
// buffers an unbounded amount.
#pragma once
#include <cstddef>

#include "core/bytes.h"
#include "core/status.h"

namespace perfsim::rpc {

// Bytes needed before next_pdu_length can answer.
inline constexpr size_t kFramePrefix = 10;

// Sets `length` to the size of the PDU starting at buffered[0], or to 0 when fewer than
// kFramePrefix bytes are buffered yet. The PDU is complete once buffered.size() >= length.
// Fails when the prefix is not a DCE/RPC 5.x header or frag_length is outside
// [16, max_frag_length]; the connection should then be closed.
Status next_pdu_length(ByteView buffered, size_t max_frag_length, size_t& length);

}  // namespace perfsim::rpc
