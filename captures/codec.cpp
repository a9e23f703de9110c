#include "captures/codec.h"

#ifndef PERFSIM_CAPTURES_PORTABLE
#include <lz4.h>
#endif

#include <algorithm>
#include <cstring>

namespace perfsim::captures {
namespace {

#ifdef PERFSIM_CAPTURES_PORTABLE
// Built without LZ4 (perfsim-record.exe: Debian has no Windows build of it): every payload is
// stored (codec 0) and LZ4-coded ones are refused; `perfsim convert` compresses on Linux.
Status no_lz4() { return Status::Unsupported("this build has no LZ4: convert the capture with perfsim on Linux"); }
Status decode_dict(ByteView, ByteView, Bytes&) { return no_lz4(); }
Status decode_lz4(ByteView, Bytes&) { return no_lz4(); }
#else

// Appends LZ4(src) to out; returns the compressed size.
size_t lz4_append(ByteView src, Bytes& out, LZ4_stream_t* with_dict = nullptr) {
  const size_t at = out.size();
  const int bound = LZ4_compressBound(int(src.size()));
  out.resize(at + size_t(bound));
  auto* dst = reinterpret_cast<char*>(out.data() + at);
  auto* in = reinterpret_cast<const char*>(src.data());
  const int n = with_dict ? LZ4_compress_fast_continue(with_dict, in, dst, int(src.size()), bound, 1)
                          : LZ4_compress_default(in, dst, int(src.size()), bound);
  out.resize(at + size_t(n));
  return size_t(n);
}

// The dictionary for the chunk starting at `start`: up to 64 KiB of base ending 48 KiB past start,
// so an instance that moved by up to 16 KiB either way is still found.
ByteView dict_window(ByteView base, size_t start) {
  const size_t end = std::min(base.size(), start + kDictWindow - kDictChunk / 2);
  const size_t begin = end > kDictWindow ? end - kDictWindow : 0;
  return base.subspan(begin, end - begin);
}

void encode_dict(ByteView payload, ByteView base, Bytes& out, EncodeScratch& s) {
  s.stream.resize(sizeof(LZ4_stream_t));
  auto* st = reinterpret_cast<LZ4_stream_t*>(s.stream.data());
  LZ4_initStream(st, sizeof(LZ4_stream_t));
  for (size_t start = 0; start < payload.size(); start += kDictChunk) {
    const ByteView chunk = payload.subspan(start, std::min(kDictChunk, payload.size() - start));
    const ByteView dict = dict_window(base, start);
    LZ4_resetStream_fast(st);
    LZ4_loadDict(st, reinterpret_cast<const char*>(dict.data()), int(dict.size()));
    const size_t len_at = out.size();
    put_le32(out, 0);
    // Sequenced apart: lz4_append may move `out`, and a pointer into it taken first (the order
    // of a call's arguments is the compiler's: clang takes it first) would write the length
    // into freed memory.
    const uint32_t len = uint32_t(lz4_append(chunk, out, st));
    store_le32(&out[len_at], len);
  }
}

Status decode_dict(ByteView coded, ByteView base, Bytes& out) {
  ByteReader r(coded);
  for (size_t start = 0; start < out.size(); start += kDictChunk) {
    const size_t n = std::min(kDictChunk, out.size() - start);
    uint32_t len;
    ByteView src;
    if (!r.u32(len) || !r.bytes(len, src)) return Status::Corruption("dictionary chunk cut off");
    const ByteView dict = dict_window(base, start);
    const int got = LZ4_decompress_safe_usingDict(reinterpret_cast<const char*>(src.data()),
                                                  reinterpret_cast<char*>(out.data() + start), int(len), int(n),
                                                  reinterpret_cast<const char*>(dict.data()), int(dict.size()));
    if (got != int(n)) return Status::Corruption("dictionary chunk does not decode");
  }
  if (r.remaining() != 0) return Status::Corruption("bytes after the last dictionary chunk");
  return Status::Ok();
}

Status decode_lz4(ByteView coded, Bytes& out) {
  const int got = LZ4_decompress_safe(reinterpret_cast<const char*>(coded.data()), reinterpret_cast<char*>(out.data()),
                                      int(coded.size()), int(out.size()));
  if (got != int(out.size())) return Status::Corruption("LZ4 block does not decode to the recorded size");
  return Status::Ok();
}

#endif

}  // namespace

void xor_into(Bytes& out, ByteView base) {
  const size_t n = std::min(out.size(), base.size());
  uint8_t* o = out.data();
  const uint8_t* b = base.data();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {  // word at a time: this loop is the decoder's hot path
    uint64_t x, y;
    std::memcpy(&x, o + i, 8);
    std::memcpy(&y, b + i, 8);
    x ^= y;
    std::memcpy(o + i, &x, 8);
  }
  for (; i < n; ++i) o[i] ^= b[i];
}

Codec encode_payload(ByteView payload, ByteView base, Codec codec, Bytes& out, EncodeScratch& s) {
  if (payload.empty()) return Codec::kStored;  // LZ4 would still emit a token
#ifdef PERFSIM_CAPTURES_PORTABLE
  static_cast<void>(base), static_cast<void>(codec), static_cast<void>(s);
  put_bytes(out, payload);
  return Codec::kStored;
#else
  switch (codec) {
    case Codec::kStored:
      put_bytes(out, payload);
      return Codec::kStored;
    case Codec::kXorLz4:
      s.tmp.assign(payload.begin(), payload.end());
      xor_into(s.tmp, base);
      lz4_append(s.tmp, out);
      return Codec::kXorLz4;
    case Codec::kDictLz4:
      encode_dict(payload, base, out, s);
      return Codec::kDictLz4;
    case Codec::kLz4:
    case Codec::kSplit:  // not a payload codec of its own here (split.h); a keyframe does
    case Codec::kSplitCross:
      break;
  }
  const size_t at = out.size();
  if (lz4_append(payload, out) < payload.size()) return Codec::kLz4;
  out.resize(at);
  put_bytes(out, payload);
  return Codec::kStored;
#endif
}

Status check_expansion(uint64_t raw_size, size_t coded_size, uint64_t ratio, const char* coder) {
  if (raw_size <= ratio * uint64_t(coded_size)) return Status::Ok();
  return Status::Corruption("recorded size " + std::to_string(raw_size) + " is more than " +
                            std::to_string(coded_size) + " " + coder + "-coded bytes can hold (at most " +
                            std::to_string(ratio) + " times as many)");
}

Status decode_payload(Codec codec, ByteView coded, ByteView base, uint32_t raw_size, Bytes& out) {
  if (codec == Codec::kStored && coded.size() != raw_size)
    return Status::Corruption("stored payload size differs from the recorded size");
  const bool lz4 = codec == Codec::kLz4 || codec == Codec::kXorLz4 || codec == Codec::kDictLz4;
  if (lz4)
    if (Status s = check_expansion(raw_size, coded.size(), kLz4MaxRatio, "LZ4"); !s.ok()) return s;
  out.resize(raw_size);
  switch (codec) {
    case Codec::kStored:
      if (raw_size) std::memcpy(out.data(), coded.data(), raw_size);
      return Status::Ok();
    case Codec::kLz4:
      return decode_lz4(coded, out);
    case Codec::kXorLz4: {
      Status st = decode_lz4(coded, out);
      if (st.ok()) xor_into(out, base);
      return st;
    }
    case Codec::kDictLz4:
      return decode_dict(coded, base, out);
    case Codec::kSplit:
    case Codec::kSplitCross:
      return Status::Corruption("split payload needs its query's history (SplitCoder::decode)");
  }
  return Status::Corruption("unknown payload codec " + std::to_string(int(codec)));
}

}  // namespace perfsim::captures
