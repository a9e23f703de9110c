// The per-connection read buffer. It starts at a small base capacity, grows only to hold a frame
// larger than that while it is in flight (never past twice the bytes buffered, whatever length
// the frame's header claims), and drops back to the base capacity as soon as every
// buffered byte has been consumed; release() frees it, which a connection does when it goes idle
// (it reads whole frames into its thread's scratch buffer: connection.h).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "core/bytes.h"

namespace perfsim::server {

class ReadBuffer {
 public:
  explicit ReadBuffer(size_t base_capacity) : base_(base_capacity ? base_capacity : 1) {}

  // Bytes received and not yet consumed.
  ByteView data() const { return {buf_.get() + head_, tail_ - head_}; }
  // Writable space after data(), large enough that data().size() + space >= need (and >= base).
  std::span<uint8_t> prepare(size_t need);
  // n bytes were written into the space prepare() returned.
  void commit(size_t n) { tail_ += n; }
  // Space to read the rest of a frame of `frame` bytes into: memory follows the bytes the peer has
  // sent, not the length its header claims, so the buffer grows to at most twice data().size()
  // per call (always by at least a byte). A 16-byte header announcing 65,535 bytes then costs the
  // base capacity, not 64 KiB (issue 54); a frame of n bytes takes log2(n / base) regrowths.
  std::span<uint8_t> prepare_toward(size_t frame) { return prepare(std::min(frame, 2 * data().size())); }
  // Drops n bytes from the front of data().
  void consume(size_t n);
  size_t capacity() const { return cap_; }
  // Frees the storage when nothing is buffered (an idle connection then holds none; the next
  // prepare() allocates again).
  void release() {
    if (head_ == tail_) {
      buf_.reset();
      cap_ = head_ = tail_ = 0;
    }
  }

 private:
  void reallocate(size_t capacity);

  std::unique_ptr<uint8_t[]> buf_;
  size_t cap_ = 0, head_ = 0, tail_ = 0;
  size_t base_;
};

}  // namespace perfsim::server
