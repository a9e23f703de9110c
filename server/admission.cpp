#include "server/admission.h"

namespace perfsim::server {

Admission::Handle Admission::join(std::weak_ptr<Evictable> conn) {
  std::lock_guard lk(mu_);
  entries_.push_back(Entry{std::move(conn)});
  return std::prev(entries_.end());
}

void Admission::leave(Handle h) {
  std::lock_guard lk(mu_);
  if (h->evicted) --evicted_listed_;
  entries_.erase(h);
}

bool Admission::evict_oldest() {
  std::lock_guard lk(mu_);
  if (evicted_listed_ == entries_.size()) return false;
  for (Entry& e : entries_) {
    if (e.evicted) continue;
    e.evicted = true;
    ++evicted_listed_;
    evictions_.fetch_add(1, std::memory_order_relaxed);
    // Listed means not yet closed (close() leaves first), so the connection's set still owns it
    // and this reference is never the last.
    if (auto c = e.conn.lock()) c->evict_async(Eviction::kUnauthenticated);
    return true;
  }
  return false;
}

size_t Admission::untrusted() const {
  std::lock_guard lk(mu_);
  return entries_.size() - evicted_listed_;
}

}  // namespace perfsim::server
