// Who may hold a connection slot before proving who they are (issue 54). Where authentication is
// required, a connection that has not authenticated is "untrusted": it is listed here from its
// start until it authenticates or closes. When every slot of the server is taken, a new
// connection is admitted by closing the oldest untrusted one, so clients without credentials can
// never lock out a collector that has them; only slots held by authenticated connections refuse.
//
// Guarantees:
// - evict_oldest() chooses the untrusted connection that joined first and not yet evicted, marks it
//   and posts its close to its own thread (Evictable::evict_async); each is evicted at most once.
// - Between an eviction and the evicted connection's close the server holds one connection more
//   than its limit: the close is a posted handler on that connection's worker, run at once.
// - The mutex is taken when an untrusted connection joins or leaves and at an eviction, never on
//   an authenticated connection's data path.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>

#include "server/reply_budget.h"

namespace perfsim::server {

class Admission {
 public:
  struct Entry {
    std::weak_ptr<Evictable> conn;
    bool evicted = false;  // guarded by mu_
  };
  using Handle = std::list<Entry>::iterator;

  Handle join(std::weak_ptr<Evictable> conn);  // an untrusted connection, now the newest
  void leave(Handle h);                        // it authenticated, or closed
  bool evict_oldest();                         // false when no untrusted connection is left to evict
  // Whether a new connection may have a slot, `active` of `limit` being held: yes below the limit,
  // and at it when an untrusted connection can be closed for it (evict_oldest).
  bool admit(size_t active, size_t limit) { return active < limit || evict_oldest(); }
  size_t untrusted() const;
  uint64_t evictions() const { return evictions_.load(std::memory_order_relaxed); }

 private:
  mutable std::mutex mu_;
  std::list<Entry> entries_;   // oldest first; stable handles
  size_t evicted_listed_ = 0;  // entries marked evicted but not yet left
  std::atomic<uint64_t> evictions_{0};
};

}  // namespace perfsim::server
