// Calls per second over a trailing window, the one definition of a rate the admin API, the
// dashboard and their README use: (calls now - calls at the window's start) / its length, the
// window 60 s, or since the API started when that is shorter (admin/README.md "Figures").
//
// The API has no timer of its own: a snapshot of every host's calls is taken when a figure is
// asked for, at most one per kEvery, and kept until a newer one is a whole window old, so memory
// is at most kWindow / kEvery + 2 snapshots of 8 bytes a host (10,000 hosts: 112 KB each). When
// nobody asked for a while, the window is the age of the newest snapshot older than 60 s, and
// says so (seconds): a rate is never over a window it does not name.
#pragma once
#include <chrono>
#include <cstdint>
#include <deque>
#include <vector>

namespace perfsim::admin {

class CallRates {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kWindow{60};
  static constexpr std::chrono::seconds kEvery{5};

  // `hosts` hosts, none called yet at `start` (the run's start).
  CallRates(size_t hosts, Clock::time_point start);

  struct Window {
    double seconds = 0;        // the window's length
    bool since_start = false;  // it starts at the run's start (shorter than kWindow, or nobody asked since)
    const std::vector<uint64_t>* base = nullptr;  // each host's calls at its start
  };
  // Takes `calls` (one per host, in order) at `now` as a snapshot when due; the window to measure over.
  Window update(const std::vector<uint64_t>& calls, Clock::time_point now);

  // (now - base) / seconds, 0 for an empty window.
  static double rate(uint64_t now, uint64_t base, double seconds);

 private:
  struct Snapshot {
    Clock::time_point at;
    std::vector<uint64_t> calls;
  };
  std::deque<Snapshot> snaps_;
  Clock::time_point start_;
};

}  // namespace perfsim::admin
