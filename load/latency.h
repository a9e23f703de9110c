// Call latencies of a load run, kept in bounded memory however long it runs: a log-linear
// histogram of microseconds (exact below 16 us, then 16 buckets per power of two, so a bucket is at
// most 1/16 = 6.25 % wide), up to 2^32 us (71 minutes, past any --timeout). Percentiles are
// nearest-rank and report their bucket's upper bound (never below the true value, at most one
// bucket above it); the maximum is exact. 464 counters: 3.7 KB a histogram.
#pragma once
#include <array>
#include <cstdint>

namespace perfsim::load {

class LatencyHistogram {
 public:
  static constexpr uint32_t kSub = 16;  // buckets per power of two
  static constexpr uint32_t kTopBit = 32;
  static constexpr uint32_t kBuckets = kSub + (kTopBit - 4) * kSub;

  void add(uint64_t us);
  void merge(const LatencyHistogram& o);
  uint64_t count() const { return count_; }
  uint64_t max_us() const { return max_; }
  // p in (0, 1]: the smallest bucket bound at or above the ceil(p * count)-th smallest value; 0 when empty.
  uint64_t percentile_us(double p) const;

  static uint32_t bucket(uint64_t us);
  static uint64_t upper_bound(uint32_t bucket);  // the largest value the bucket holds

 private:
  std::array<uint64_t, kBuckets> counts_{};
  uint64_t count_ = 0;
  uint64_t max_ = 0;
};

}  // namespace perfsim::load
