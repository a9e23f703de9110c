// Background work shared by every recording of a process: a fixed set of threads runs queued jobs
// in order. A fleet replaying many captures gets a bounded number of threads (not one or two per
// capture), and jobs of a recording being closed are taken back before it goes.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace perfsim::replayer {

class Workers {
 public:
  using Id = uint64_t;

  // `threads` started on the first post (at least one), each at `nice` (0: as the process).
  Workers(unsigned threads, int nice);
  ~Workers();  // queued jobs are dropped; running ones finish; threads joined
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;

  Id post(std::function<void()> job);
  // Once this returns, job `id` neither runs nor will: removed if still queued, waited for if
  // running. Never call it from the job itself.
  void retract(Id id);

  // Counter-growth passes: half the cores at nice 10 (answers come first).
  static Workers& passes();
  // Prefetch of the next ticks: one thread per core at the process's priority (a timeline must
  // not wait on decode behind a long pass).
  static Workers& prefetch();

 private:
  void run();

  const unsigned threads_;
  const int nice_;
  std::mutex mu_;
  std::condition_variable ready_, done_;
  std::deque<std::pair<Id, std::function<void()>>> queue_;
  std::set<Id> running_;
  Id next_ = 1;
  bool stop_ = false;
  std::vector<std::thread> pool_;
};

}  // namespace perfsim::replayer
