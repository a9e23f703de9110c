// A byte sequence made of pieces: bytes the chain owns, and views into buffers whose ownership it
// shares. A large payload can so travel from the producer through the NDR stub and every PDU
// fragment to a gathered socket write without being copied on the way.
//
// Contract: the chain's bytes are its pieces in append order; a shared piece stays valid as long
// as any chain holding it lives (its owner is kept). Move-only, because owned pieces are offsets
// into the chain's own storage. A chain built only from owned bytes costs what a Bytes costs.
#pragma once
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "core/bytes.h"

namespace perfsim {

class ByteChain {
 public:
  ByteChain() = default;
  ByteChain(Bytes b) : own_(std::move(b)), size_(own_.size()) {}  // implicit: takes b, no copy
  ByteChain(ByteChain&&) noexcept = default;
  ByteChain& operator=(ByteChain&&) noexcept = default;
  ByteChain(const ByteChain&) = delete;
  ByteChain& operator=(const ByteChain&) = delete;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Copies `b` into the chain's own storage.
  void append(ByteView b);
  // References `piece`, which must lie in memory `owner` keeps alive; no copy.
  void append_shared(std::shared_ptr<const void> owner, ByteView piece);
  // Appends bytes [pos, pos + n) of `src`: its shared pieces are shared, its own bytes copied.
  // Requires pos + n <= src.size().
  void append_range(const ByteChain& src, size_t pos, size_t n);

  // Calls f(ByteView) for each non-empty piece, in order.
  template <class F>
  void for_each(F&& f) const {
    if (pieces_.empty()) {
      if (!own_.empty()) f(ByteView(own_));
      return;
    }
    for (const Piece& p : pieces_) f(view(p));
  }
  size_t piece_count() const { return pieces_.empty() ? (own_.empty() ? 0 : 1) : pieces_.size(); }
  Bytes flatten() const;

 private:
  struct Piece {
    std::shared_ptr<const void> owner;  // null: [offset, offset + size) of own_
    const uint8_t* data = nullptr;      // shared pieces only
    size_t offset = 0;
    size_t size = 0;
  };
  ByteView view(const Piece& p) const {
    return p.owner ? ByteView(p.data, p.size) : ByteView(own_).subspan(p.offset, p.size);
  }

  // While only owned bytes were appended, pieces_ stays empty and own_ is the whole chain.
  Bytes own_;
  std::vector<Piece> pieces_;
  size_t size_ = 0;
};

}  // namespace perfsim
