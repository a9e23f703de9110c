// LatencyHistogram against exact nearest-rank percentiles of the same values: never below the true
// value, at most one bucket (6.25 %) above it, the maximum exact.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "load/latency.h"

using perfsim::load::LatencyHistogram;

namespace {

uint64_t exact(std::vector<uint64_t> v, double p) {
  std::sort(v.begin(), v.end());
  const size_t rank = size_t(std::ceil(p * double(v.size())));
  return v[std::max<size_t>(rank, 1) - 1];
}

}  // namespace

TEST_CASE("every value lies in the bucket whose bounds hold it") {
  for (uint64_t us : {0ull, 1ull, 15ull, 16ull, 17ull, 31ull, 32ull, 33ull, 1000ull, 123456ull, (1ull << 31) + 5}) {
    const uint32_t b = LatencyHistogram::bucket(us);
    INFO(us << " -> bucket " << b);
    CHECK(LatencyHistogram::upper_bound(b) >= us);
    if (b > 0) CHECK(LatencyHistogram::upper_bound(b - 1) < us);
  }
  CHECK(LatencyHistogram::bucket(uint64_t(1) << 40) == LatencyHistogram::kBuckets - 1);
}

TEST_CASE("percentiles are within one bucket above the exact ones and the maximum is exact") {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(std::log(400.0), 1.0);  // a call latency's shape, median 400 us
  std::vector<uint64_t> v;
  LatencyHistogram h;
  for (int i = 0; i < 20000; ++i) {
    v.push_back(uint64_t(dist(rng)));
    h.add(v.back());
  }
  CHECK(h.count() == v.size());
  CHECK(h.max_us() == *std::max_element(v.begin(), v.end()));
  for (double p : {0.5, 0.9, 0.99, 0.999}) {
    const uint64_t want = exact(v, p), got = h.percentile_us(p);
    INFO("p" << p << ": exact " << want << ", histogram " << got);
    CHECK(got >= want);
    CHECK(double(got) <= double(want) * 1.0625 + 1);
  }
  LatencyHistogram a, b;
  for (size_t i = 0; i < v.size(); ++i) (i % 2 ? a : b).add(v[i]);
  a.merge(b);
  CHECK(a.percentile_us(0.99) == h.percentile_us(0.99));
  CHECK(a.max_us() == h.max_us());
  CHECK(LatencyHistogram().percentile_us(0.5) == 0);
}
