// Little-endian byte access for the wire and file formats. Readers never read past the span they
// were given: each get* checks bounds and reports failure instead of touching memory outside it.
#pragma once
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace perfsim {

using Bytes = std::vector<uint8_t>;
using ByteView = std::span<const uint8_t>;

// On a little-endian host the wire order is the memory order: one unaligned copy of the width is
// the load or store (one instruction at -O2). GCC merged the shifted byte loads but left the
// stores as byte loops, and every writer of a counter, clock or length goes through them. Other
// hosts keep the portable byte form.
inline constexpr bool kLittleEndianHost = std::endian::native == std::endian::little;
template <class T>
inline T load_le(const uint8_t* p) {
  T v = 0;
  if constexpr (kLittleEndianHost) {
    std::memcpy(&v, p, sizeof v);
  } else {
    for (size_t i = 0; i < sizeof v; ++i) v = T(v | (T(p[i]) << (8 * i)));
  }
  return v;
}
template <class T>
inline void store_le(uint8_t* p, T v) {
  if constexpr (kLittleEndianHost) {
    std::memcpy(p, &v, sizeof v);
  } else {
    for (size_t i = 0; i < sizeof v; ++i) p[i] = uint8_t(v >> (8 * i));
  }
}
inline uint16_t load_le16(const uint8_t* p) { return load_le<uint16_t>(p); }
inline uint32_t load_le32(const uint8_t* p) { return load_le<uint32_t>(p); }
inline uint64_t load_le64(const uint8_t* p) { return load_le<uint64_t>(p); }
inline void store_le16(uint8_t* p, uint16_t v) { store_le(p, v); }
inline void store_le32(uint8_t* p, uint32_t v) { store_le(p, v); }
inline void store_le64(uint8_t* p, uint64_t v) { store_le(p, v); }

inline void put_le16(Bytes& b, uint16_t v) {
  b.push_back(uint8_t(v));
  b.push_back(uint8_t(v >> 8));
}
inline void put_le32(Bytes& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(uint8_t(v >> (8 * i)));
}
inline void put_le64(Bytes& b, uint64_t v) {
  for (int i = 0; i < 8; ++i) b.push_back(uint8_t(v >> (8 * i)));
}
inline void put_bytes(Bytes& b, ByteView v) { b.insert(b.end(), v.begin(), v.end()); }
inline void pad_to(Bytes& b, size_t align, uint8_t fill = 0) {
  while (b.size() % align) b.push_back(fill);
}

constexpr uint32_t align_up(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

// Bounds-checked sequential reader over a byte span.
class ByteReader {
 public:
  explicit ByteReader(ByteView data, size_t pos = 0) : d_(data), pos_(pos) {}
  size_t pos() const { return pos_; }
  size_t remaining() const { return pos_ <= d_.size() ? d_.size() - pos_ : 0; }
  bool seek(size_t p) {
    if (p > d_.size()) return false;
    pos_ = p;
    return true;
  }
  bool skip(size_t n) {
    if (n > remaining()) return false;
    pos_ += n;
    return true;
  }
  bool u8(uint8_t& v) {
    if (remaining() < 1) return false;
    v = d_[pos_++];
    return true;
  }
  bool u16(uint16_t& v) {
    if (remaining() < 2) return false;
    v = load_le16(&d_[pos_]);
    pos_ += 2;
    return true;
  }
  bool u32(uint32_t& v) {
    if (remaining() < 4) return false;
    v = load_le32(&d_[pos_]);
    pos_ += 4;
    return true;
  }
  bool u64(uint64_t& v) {
    if (remaining() < 8) return false;
    v = load_le64(&d_[pos_]);
    pos_ += 8;
    return true;
  }
  bool i32(int32_t& v) {
    uint32_t u;
    if (!u32(u)) return false;
    v = int32_t(u);
    return true;
  }
  bool i64(int64_t& v) {
    uint64_t u;
    if (!u64(u)) return false;
    v = int64_t(u);
    return true;
  }
  bool bytes(size_t n, ByteView& out) {
    if (n > remaining()) return false;
    out = d_.subspan(pos_, n);
    pos_ += n;
    return true;
  }
  ByteView data() const { return d_; }

 private:
  ByteView d_;
  size_t pos_;
};

}  // namespace perfsim
