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

// What `coded` bytes can decode to at most, so that a damaged or crafted raw_size is refused
// before anything is allocated (a 145 KB record claiming 1 GiB cost 1.07 GB per command).
// LZ4: every byte of a block adds at most 255 to the output (each length byte adds up to 255, a
// literal one byte; lz4's doc/lz4_Block_format.md: "a maximum achievable compression ratio of
// about ~250"), so n coded bytes give at most 255 n, for the XOR and dictionary codecs too.
inline constexpr uint64_t kLz4MaxRatio = 255;
// zstd (RFC 8878 3.1.1.2): a block decodes to at most 128 KiB and the smallest (RLE) takes a
// 3-byte header and 1 byte, so n coded bytes give at most 32768 n.
inline constexpr uint64_t kZstdMaxRatio = 128 * 1024 / 4;
// Corruption naming both sizes when raw_size is more than `ratio` times coded_size can hold.
Status check_expansion(uint64_t raw_size, size_t coded_size, uint64_t ratio, const char* coder);

// Decodes into out (resized to raw_size, once raw_size is checked against what coded can hold). base must be the payload the record was coded against.
Status decode_payload(Codec codec, ByteView coded, ByteView base, uint32_t raw_size, Bytes& out);

// out[i] ^= base[i] for every i both have: the XOR delta is its own inverse.
void xor_into(Bytes& out, ByteView base);

}  // namespace perfsim::captures
