// Immutable contiguous bytes whose buffer is shared: copies and slices cost a reference count,
// not the bytes. A recorded answer can so leave the capture for the socket without a copy (the
// NDR writer references it, see rpc/ndr.h), while code that reads it sees one plain span.
//
// Contract: the bytes never change after construction; the buffer lives as long as any
// SharedBytes viewing it. Code that must change bytes takes a copy (to_bytes), edits it and wraps
// the result (SharedBytes(Bytes) takes the vector without copying). A decoded value that nobody
// else views hands its vector back without a copy (std::move(x).to_bytes()).
#pragma once
#include <algorithm>
#include <cstddef>
#include <memory>
#include <utility>

#include "core/bytes.h"

namespace perfsim {

class SharedBytes {
 public:
  SharedBytes() = default;
  // Implicit: takes `b` without copying its bytes.
  SharedBytes(Bytes b) {
    if (b.empty()) return;
    auto own = std::make_shared<Bytes>(std::move(b));
    mine_ = own.get();
    view_ = ByteView(*own);
    owner_ = std::move(own);
  }
  // Views `view`, which must lie in memory `owner` keeps alive.
  SharedBytes(std::shared_ptr<const void> owner, ByteView view) : owner_(std::move(owner)), view_(view) {}

  size_t size() const { return view_.size(); }
  bool empty() const { return view_.empty(); }
  const uint8_t* data() const { return view_.data(); }
  auto begin() const { return view_.begin(); }
  auto end() const { return view_.end(); }
  const uint8_t& operator[](size_t i) const { return view_[i]; }
  ByteView view() const { return view_; }
  operator ByteView() const { return view_; }
  const std::shared_ptr<const void>& owner() const { return owner_; }

  // The first min(n, size()) bytes, sharing the buffer.
  SharedBytes first(size_t n) const { return SharedBytes(owner_, view_.first(std::min(n, view_.size()))); }
  Bytes to_bytes() const& { return Bytes(view_.begin(), view_.end()); }
  // Moves the vector out when this SharedBytes made it, views all of it and is its only owner;
  // copies otherwise. Leaves this empty.
  Bytes to_bytes() && {
    Bytes out;
    if (mine_ && owner_.use_count() == 1 && view_.size() == mine_->size())
      out = std::move(*mine_);
    else
      out = to_bytes();
    *this = SharedBytes();
    return out;
  }

  friend bool operator==(const SharedBytes& a, ByteView b) { return std::ranges::equal(a.view_, b); }
  friend bool operator==(const SharedBytes& a, const SharedBytes& b) { return a == b.view_; }
  friend bool operator==(const SharedBytes& a, const Bytes& b) { return a == ByteView(b); }

 private:
  std::shared_ptr<const void> owner_;
  ByteView view_;
  Bytes* mine_ = nullptr;  // the vector behind owner_ when built from Bytes (copies share it too)
};

}  // namespace perfsim
