#include "server/reply_budget.h"

#include <algorithm>
#include <vector>

namespace perfsim::server {

int64_t ReplyBudget::now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

ReplyBudget::Handle ReplyBudget::join(std::weak_ptr<Evictable> conn) {
  std::lock_guard lk(mu_);
  shares_.emplace_back();
  shares_.back().conn = std::move(conn);
  return std::prev(shares_.end());
}

void ReplyBudget::leave(Handle h) {
  queued_.fetch_sub(h->queued.load(std::memory_order_relaxed), std::memory_order_relaxed);
  std::lock_guard lk(mu_);
  shares_.erase(h);
}

void ReplyBudget::charge(Handle h, size_t n) {
  if (n == 0) return;
  if (h->queued.fetch_add(n, std::memory_order_relaxed) == 0) h->progress_ns.store(now_ns(), std::memory_order_relaxed);
  const size_t total = queued_.fetch_add(n, std::memory_order_relaxed) + n;
  for (size_t p = peak_.load(std::memory_order_relaxed);
       total > p && !peak_.compare_exchange_weak(p, total, std::memory_order_relaxed);) {}
  if (total > limit_) evict_for(h);
}

void ReplyBudget::credit(Handle h, size_t n) {
  if (n == 0) return;
  h->queued.fetch_sub(n, std::memory_order_relaxed);
  h->progress_ns.store(now_ns(), std::memory_order_relaxed);
  queued_.fetch_sub(n, std::memory_order_relaxed);
}

void ReplyBudget::evict_for(Handle self) {
  std::lock_guard lk(mu_);
  // Bytes of shares already evicted count as freed: their closes are on the way.
  size_t freed = 0;
  std::vector<Share*> candidates;
  for (Share& s : shares_) {
    const size_t q = s.queued.load(std::memory_order_relaxed);
    if (s.evicted.load(std::memory_order_relaxed))
      freed += q;
    else if (q > 0 && &s != &*self)
      candidates.push_back(&s);
  }
  std::sort(candidates.begin(), candidates.end(), [](const Share* a, const Share* b) {
    return a->progress_ns.load(std::memory_order_relaxed) < b->progress_ns.load(std::memory_order_relaxed);
  });
  for (Share* s : candidates) {
    if (queued() <= limit_ + freed) break;
    s->evicted.store(true, std::memory_order_relaxed);
    freed += s->queued.load(std::memory_order_relaxed);
    evictions_.fetch_add(1, std::memory_order_relaxed);
    // A share still listed is a connection that has not closed (close() leaves first), so the set
    // still owns it and this reference is never the last.
    if (auto c = s->conn.lock()) c->evict_async(Eviction::kSlowReader);
  }
}

}  // namespace perfsim::server
