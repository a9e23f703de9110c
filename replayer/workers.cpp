#include "replayer/workers.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

namespace perfsim::replayer {

Workers::Workers(unsigned threads, int nice) : threads_(std::max(threads, 1u)), nice_(nice) {}

Workers::~Workers() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    queue_.clear();
  }
  ready_.notify_all();
  for (std::thread& t : pool_) t.join();
}

Workers::Id Workers::post(std::function<void()> job) {
  Id id;
  {
    std::lock_guard lock(mu_);
    id = next_++;
    queue_.emplace_back(id, std::move(job));
    if (pool_.size() < threads_) pool_.emplace_back([this] { run(); });
  }
  ready_.notify_one();
  return id;
}

void Workers::retract(Id id) {
  std::unique_lock lock(mu_);
  const auto queued = std::find_if(queue_.begin(), queue_.end(), [&](const auto& j) { return j.first == id; });
  if (queued != queue_.end()) {
    queue_.erase(queued);
    return;
  }
  done_.wait(lock, [&] { return running_.count(id) == 0; });
}

void Workers::run() {
  if (nice_ != 0) ::setpriority(PRIO_PROCESS, pid_t(::gettid()), nice_);
  std::unique_lock lock(mu_);
  for (;;) {
    ready_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    auto [id, job] = std::move(queue_.front());
    queue_.pop_front();
    running_.insert(id);
    lock.unlock();
    job();
    job = nullptr;  // what the job holds goes before retract() returns
    lock.lock();
    running_.erase(id);
    done_.notify_all();
  }
}

// Never destroyed: a recording held by a static may be closed after these would be, and its
// retract() must find them alive; the threads end with the process.
Workers& Workers::passes() {
  static Workers& w = *new Workers(std::thread::hardware_concurrency() / 2, 10);
  return w;
}

Workers& Workers::prefetch() {
  static Workers& w = *new Workers(std::thread::hardware_concurrency(), 0);
  return w;
}

}  // namespace perfsim::replayer
