// Payload codecs (FORMAT.md "Payload codecs"): a query payload is stored alone (keyframe) or as a
// delta against the previous payload of the same query. Decoding checks every length it is given
// and never reads or writes outside the spans; a mismatch is a Corruption status.
#pragma once
#include "captures/format.h"

namespace perfsim::captures {

inline constexpr size_t kDictChunk = 32 * 1024;
inline constexpr size_t kDictWindow = 64 * 1024;  // LZ4's window: a larger dictionary is unused

// Reusable buffers so steady-state encoding allocates nothing.
struct EncodeScratch {
  Bytes tmp;
  Bytes stream;  // LZ4_stream_t storage for the dictionary codec
};

// Appends the coded payload to out and returns the codec used: kLz4 falls back to kStored when
// compression does not help. base is ignored by kStored/kLz4.
Codec encode_payload(ByteView payload, ByteView base, Codec codec, Bytes& out, EncodeScratch& s);

// Decodes into out (resized to raw_size). base must be the payload the record was coded against.
Status decode_payload(Codec codec, ByteView coded, ByteView base, uint32_t raw_size, Bytes& out);

// out[i] ^= base[i] for every i both have: the XOR delta is its own inverse.
void xor_into(Bytes& out, ByteView base);

}  // namespace perfsim::captures
