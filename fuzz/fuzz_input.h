// Helpers the fuzz targets share: taking typed fields from libFuzzer's input without ever reading
// past it (a short input yields zeros), and the bundled capture the stateful targets serve.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/bytes.h"

namespace perfsim::fuzz {

class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t u8() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint16_t u16() { return uint16_t(u8() | (u8() << 8)); }
  uint32_t u32() { return uint32_t(u16()) | (uint32_t(u16()) << 16); }
  ByteView take(size_t n) {
    n = n < size_ - pos_ ? n : size_ - pos_;
    ByteView v(data_ + pos_, n);
    pos_ += n;
    return v;
  }
  ByteView rest() { return take(size_ - pos_); }
  bool empty() const { return pos_ >= size_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// Where the repository's files are (seeds, bundled captures); the build sets it.
inline std::string source_path(const std::string& rel) { return std::string(PERFSIM_SOURCE_DIR) + "/" + rel; }

// A broken invariant is a crash libFuzzer keeps the input of.
inline void require(bool ok) {
  if (!ok) std::abort();
}

}  // namespace perfsim::fuzz
