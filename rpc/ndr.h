// NDR 2.0 (32-bit, little-endian) marshalling primitives for DCE/RPC stubs (C706 chapter 14).
// Writer and Reader expose the same member functions taking non-const references, so one
// template per structure describes both directions and they cannot drift apart.
// Alignment is relative to the stub start. Reader is bounds-checked: it never reads past the
// stub, refuses array counts larger than the bytes left (no allocation from a hostile count),
// and records the offset and cause of the first failure.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/byte_chain.h"
#include "core/bytes.h"
#include "core/shared_bytes.h"
#include "core/status.h"

namespace perfsim::ndr {

class Writer {
 public:
  static constexpr bool kReading = false;

  // The stub's own bytes grow in place: reserving a small stub's worth up front spares the
  // doubling reallocations that were a tenth of a small call's server CPU (issue 29).
  static constexpr size_t kReserve = 256;
  Writer() { out_.reserve(kReserve); }
  // Gathering writer: byte arrays of at least kShareMin bytes that lie inside memory `owner` keeps
  // alive, and SharedBytes arrays (kept alive by their own owner), are referenced, not copied;
  // take_chain() then returns the stub.
  explicit Writer(std::shared_ptr<const void> owner) : owner_(std::move(owner)) { out_.reserve(kReserve); }
  static constexpr size_t kShareMin = 1024;  // below this a copy is cheaper than a piece

  bool align(size_t n) {
    if (const size_t r = pos() % n) out_.resize(out_.size() + n - r, 0);
    return true;
  }
  bool u8(uint8_t& v) {
    out_.push_back(v);
    return true;
  }
  bool u16(uint16_t& v) {
    align(2);
    store_le16(grow(2), v);
    return true;
  }
  bool u32(uint32_t& v) {
    align(4);
    store_le32(grow(4), v);
    return true;
  }
  bool u64(uint64_t& v) {
    align(8);
    store_le64(grow(8), v);
    return true;
  }
  // Unique/full pointer: a fresh referent id when present, 0 when NULL.
  bool pointer(bool& present);
  // Conformant-varying array header: max_count, offset, actual_count.
  bool array_header(uint32_t& max_count, uint32_t& offset, uint32_t& actual);
  // Write exactly `count` bytes: the data's first bytes, then NULs.
  bool bytes(Bytes& data, uint32_t count) { return put(data, count, owner_); }
  bool bytes(SharedBytes& data, uint32_t count) { return put(data, count, data.owner()); }
  bool utf16(std::u16string& text, uint32_t units);  // writes `units` code units (text, then NULs)
  bool fail(const char*) { return false; }

  Bytes& data() { return out_; }            // a non-gathering writer's stub so far
  Bytes take() { return std::move(out_); }  // a non-gathering writer's stub
  ByteChain take_chain();

 private:
  size_t pos() const { return shared_ + out_.size(); }  // stub offset, for alignment
  uint8_t* grow(size_t n) {                             // n more bytes at the end, to be stored into
    out_.resize(out_.size() + n);
    return out_.data() + out_.size() - n;
  }
  bool put(ByteView data, uint32_t count, const std::shared_ptr<const void>& owner);

  Bytes out_;  // bytes since the last shared piece
  uint32_t next_referent_ = 0x00020000;
  std::shared_ptr<const void> owner_;
  ByteChain chain_;    // stub up to out_, when gathering
  size_t shared_ = 0;  // == chain_.size()
};

class Reader {
 public:
  static constexpr bool kReading = true;
  explicit Reader(ByteView stub) : r_(stub) {}

  bool align(size_t n);
  bool u8(uint8_t& v) { return r_.u8(v) || fail("truncated u8"); }
  bool u16(uint16_t& v) { return (align(2) && r_.u16(v)) || fail("truncated u16"); }
  bool u32(uint32_t& v) { return (align(4) && r_.u32(v)) || fail("truncated u32"); }
  bool u64(uint64_t& v) { return (align(8) && r_.u64(v)) || fail("truncated u64"); }
  bool pointer(bool& present);
  // Checks offset == 0 and actual <= max_count.
  bool array_header(uint32_t& max_count, uint32_t& offset, uint32_t& actual);
  bool bytes(Bytes& data, uint32_t count);
  bool bytes(SharedBytes& data, uint32_t count);
  bool utf16(std::u16string& text, uint32_t units);
  // Records the first failure with the current offset; always returns false.
  bool fail(const char* what);

  size_t pos() const { return r_.pos(); }
  size_t remaining() const { return r_.remaining(); }
  Status status() const { return error_.empty() ? Status::Ok() : Status::Corruption(error_); }

 private:
  ByteReader r_;
  std::string error_;
};

// A unique pointer to T: `body` marshals the pointee when present.
template <class Io, class T, class Body>
bool unique(Io& io, std::optional<T>& v, Body body) {
  bool present = v.has_value();
  if (!io.pointer(present)) return false;
  if (!present) return true;
  if constexpr (Io::kReading) v.emplace();
  return body(*v);
}

// Conformant-varying UTF-16 string ([string] wchar_t*): counts include the NUL terminator;
// `text` holds the string without it.
template <class Io>
bool cv_string(Io& io, std::u16string& text) {
  uint32_t units = uint32_t(text.size() + 1), offset = 0, max = units;
  if (!io.array_header(max, offset, units)) return false;
  if (!io.utf16(text, units)) return false;
  if constexpr (Io::kReading) {
    if (!text.empty() && text.back() == u'\0') text.pop_back();
  }
  return true;
}

// Conformant-varying byte array whose counts live elsewhere (size_is / length_is).
// Writing: max_count = max(size_is, data.size()), actual = data.size(). Data: Bytes or SharedBytes.
template <class Io, class Data>
bool cv_bytes(Io& io, Data& data, uint32_t size_is) {
  uint32_t max = std::max<uint32_t>(size_is, uint32_t(data.size())), offset = 0, actual = uint32_t(data.size());
  return io.array_header(max, offset, actual) && io.bytes(data, actual);
}

}  // namespace perfsim::ndr
