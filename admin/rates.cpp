#include "admin/rates.h"

namespace perfsim::admin {

CallRates::CallRates(size_t hosts, Clock::time_point start) : start_(start) {
  snaps_.push_back({start, std::vector<uint64_t>(hosts, 0)});
}

CallRates::Window CallRates::update(const std::vector<uint64_t>& calls, Clock::time_point now) {
  if (now - snaps_.back().at >= kEvery) snaps_.push_back({now, calls});
  // The front is the base: drop it while the next one is old enough to be the base instead.
  while (snaps_.size() > 1 && now - snaps_[1].at >= kWindow) snaps_.pop_front();
  Window w;
  w.seconds = std::chrono::duration<double>(now - snaps_.front().at).count();
  w.since_start = snaps_.front().at == start_;
  w.base = &snaps_.front().calls;
  return w;
}

double CallRates::rate(uint64_t now, uint64_t base, double seconds) {
  if (seconds <= 0 || now < base) return 0;
  return double(now - base) / seconds;
}

}  // namespace perfsim::admin
