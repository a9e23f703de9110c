#include "core/byte_chain.h"

#include <algorithm>

namespace perfsim {

void ByteChain::append(ByteView b) {
  if (b.empty()) return;
  const size_t at = own_.size();
  own_.insert(own_.end(), b.begin(), b.end());
  size_ += b.size();
  if (pieces_.empty()) return;
  Piece& last = pieces_.back();
  if (!last.owner && last.offset + last.size == at)
    last.size += b.size();  // extends the own tail
  else
    pieces_.push_back(Piece{nullptr, nullptr, at, b.size()});
}

void ByteChain::append_shared(std::shared_ptr<const void> owner, ByteView piece) {
  if (piece.empty()) return;
  if (pieces_.empty()) {
    pieces_.reserve(4);  // a fragment is typically header + stub prefix, payload, stub suffix
    if (!own_.empty()) pieces_.push_back(Piece{nullptr, nullptr, 0, own_.size()});
  }
  pieces_.push_back(Piece{std::move(owner), piece.data(), 0, piece.size()});
  size_ += piece.size();
}

void ByteChain::append_range(const ByteChain& src, size_t pos, size_t n) {
  const size_t end = pos + n;
  size_t at = 0;  // offset of the current piece in src
  auto take = [&](const std::shared_ptr<const void>* owner, ByteView v) {
    const size_t from = std::max(pos, at), to = std::min(end, at + v.size());
    if (from < to) {
      ByteView part = v.subspan(from - at, to - from);
      if (owner)
        append_shared(*owner, part);
      else
        append(part);
    }
    at += v.size();
  };
  if (src.pieces_.empty()) {
    take(nullptr, src.own_);
    return;
  }
  for (const Piece& p : src.pieces_) {
    if (at >= end) break;
    take(p.owner ? &p.owner : nullptr, src.view(p));
  }
}

Bytes ByteChain::flatten() const {
  Bytes out;
  out.reserve(size_);
  for_each([&](ByteView v) { put_bytes(out, v); });
  return out;
}

}  // namespace perfsim
