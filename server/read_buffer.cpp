#include "server/read_buffer.h"

#include <algorithm>
#include <cstring>

namespace perfsim::server {

void ReadBuffer::reallocate(size_t capacity) {
  // Uninitialised on purpose: every byte is written by a read before it is looked at.
  std::unique_ptr<uint8_t[]> fresh(new uint8_t[capacity]);
  size_t used = tail_ - head_;
  if (used) std::memcpy(fresh.get(), buf_.get() + head_, used);
  buf_ = std::move(fresh);
  cap_ = capacity;
  head_ = 0;
  tail_ = used;
}

std::span<uint8_t> ReadBuffer::prepare(size_t need) {
  need = std::max({need, base_, tail_ - head_ + 1});
  if (cap_ < need) {
    reallocate(need);
  } else if (cap_ - head_ < need || tail_ == cap_) {
    size_t used = tail_ - head_;
    std::memmove(buf_.get(), buf_.get() + head_, used);
    head_ = 0;
    tail_ = used;
  }
  return {buf_.get() + tail_, cap_ - tail_};
}

void ReadBuffer::consume(size_t n) {
  head_ += std::min(n, tail_ - head_);
  if (head_ != tail_) return;
  head_ = tail_ = 0;
  if (cap_ > base_) reallocate(base_);
}

}  // namespace perfsim::server
