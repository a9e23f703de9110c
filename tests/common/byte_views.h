// Where a test's bytes live: for checks that an answer is referenced, not copied.
#pragma once
#include "core/byte_chain.h"
#include "core/bytes.h"

namespace perfsim::testing {

// True when `part` is non-empty and lies wholly inside `buf`'s memory.
inline bool lies_within(ByteView part, ByteView buf) {
  return !part.empty() && !buf.empty() && part.data() >= buf.data() &&
         part.data() + part.size() <= buf.data() + buf.size();
}

// Bytes of `c` whose pieces point into `buf`.
inline size_t referenced_from(const ByteChain& c, ByteView buf) {
  size_t n = 0;
  c.for_each([&](ByteView v) {
    if (lies_within(v, buf)) n += v.size();
  });
  return n;
}

}  // namespace perfsim::testing
