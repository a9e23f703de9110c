// The statistics the benches report. Rounds alternate between perfsim and its baseline, so a figure
// is the median of per-round values (robust to one slow round on a shared machine) with its range;
// latencies are nearest-rank percentiles over every call.
#pragma once
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace perfsim::bench {

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// p in [0, 1]; the value at rank floor(n * p), as the benches have always reported p50/p99.
template <typename T>
double percentile(std::vector<T> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return double(v[std::min(v.size() - 1, size_t(double(v.size()) * p))]);
}

// "median (min-max)", each printed with the printf format `fmt` (e.g. "%.2f"); "-" when empty.
inline std::string median_range(const std::vector<double>& v, const char* fmt) {
  if (v.empty()) return "-";
  const auto one = [fmt](double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, fmt, x);
    return std::string(buf);
  };
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return one(median(v)) + " (" + one(*lo) + "-" + one(*hi) + ")";
}

}  // namespace perfsim::bench
