#include "load/latency.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace perfsim::load {

uint32_t LatencyHistogram::bucket(uint64_t us) {
  if (us < kSub) return uint32_t(us);
  if (us >= (uint64_t(1) << kTopBit)) return kBuckets - 1;
  const uint32_t e = uint32_t(std::bit_width(us)) - 1;  // 4 .. kTopBit-1
  const uint32_t sub = uint32_t(us >> (e - 4)) & (kSub - 1);
  return kSub + (e - 4) * kSub + sub;
}

uint64_t LatencyHistogram::upper_bound(uint32_t b) {
  if (b < kSub) return b;
  const uint32_t e = (b - kSub) / kSub + 4, sub = (b - kSub) % kSub;
  return ((uint64_t(kSub + sub) + 1) << (e - 4)) - 1;
}

void LatencyHistogram::add(uint64_t us) {
  ++counts_[bucket(us)];
  ++count_;
  max_ = std::max(max_, us);
}

void LatencyHistogram::merge(const LatencyHistogram& o) {
  for (uint32_t i = 0; i < kBuckets; ++i) counts_[i] += o.counts_[i];
  count_ += o.count_;
  max_ = std::max(max_, o.max_);
}

uint64_t LatencyHistogram::percentile_us(double p) const {
  if (count_ == 0) return 0;
  const uint64_t rank = std::clamp<uint64_t>(uint64_t(std::ceil(p * double(count_))), 1, count_);
  uint64_t seen = 0;
  for (uint32_t i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) return i == kBuckets - 1 ? max_ : std::min(upper_bound(i), max_);  // the last is open
  }
  return max_;
}

}  // namespace perfsim::load
