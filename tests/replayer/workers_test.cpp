// replayer::Workers: the shared background threads behind counter passes and prefetch.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "replayer/recording.h"
#include "replayer/sample_cache.h"
#include "replayer/workers.h"

using namespace perfsim::replayer;
using namespace std::chrono_literals;

namespace {

size_t thread_count() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

// Waits (bounded) until `cond` holds.
template <class F>
bool eventually(F cond) {
  const auto until = std::chrono::steady_clock::now() + 30s;
  while (!cond() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(1ms);
  return cond();
}

}  // namespace

TEST_CASE("workers run at most their threads' worth of jobs at once, and every job posted") {
  Workers w(2, 0);
  std::atomic<int> now{0}, most{0}, done{0};
  for (int i = 0; i < 20; ++i)
    w.post([&] {
      const int n = ++now;
      for (int m = most.load(); n > m && !most.compare_exchange_weak(m, n);) {}
      std::this_thread::sleep_for(2ms);
      --now;
      ++done;
    });
  REQUIRE(eventually([&] { return done == 20; }));
  CHECK(most == 2);
}

TEST_CASE("a retracted job that has not started never runs, one that runs is waited for") {
  Workers w(1, 0);
  std::atomic<bool> release{false}, first_started{false}, first_done{false}, second_ran{false};
  const Workers::Id first = w.post([&] {
    first_started = true;
    while (!release) std::this_thread::sleep_for(1ms);
    std::this_thread::sleep_for(20ms);
    first_done = true;
  });
  const Workers::Id second = w.post([&] { second_ran = true; });
  REQUIRE(eventually([&] { return first_started.load(); }));
  w.retract(second);  // queued behind the first: taken back
  release = true;
  w.retract(first);  // running: returns once it has finished
  CHECK(first_done);
  std::this_thread::sleep_for(50ms);
  CHECK_FALSE(second_ran);
}

TEST_CASE("a fleet of recordings opened from files does not start a thread per recording") {
  const std::string path = std::string(PERFSIM_SOURCE_DIR) + "/captures/default-2016.perfcap";
  auto cache = std::make_shared<SampleCache>();
  const size_t before = thread_count();
  std::vector<std::shared_ptr<const Recording>> recs(24);
  for (auto& r : recs) {
    REQUIRE(open_recording(path, cache, r).ok());
    r->prefetch(1, Patches::kNone);
  }
  // Counter passes and prefetch share Workers::passes() and Workers::prefetch(): at most one
  // thread per core each, however many recordings are open (24 here; there were 48 threads).
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  CHECK(thread_count() <= before + 2 * cores);
  for (const auto& r : recs) CHECK(r->sample(2, Series::kGlobal, Patches::kAll));  // every pass finishes
  recs.clear();
}
