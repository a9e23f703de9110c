// The server-wide budget for reply bytes queued but not yet taken by the kernel (clients that read
// slowly or never). Every connection of a Server (TCP and smbd pipes) has a Share in it.
//
// Guarantees:
// - queued() is the sum of the shares' queued bytes; peak() the largest it has been.
// - When a charge takes queued() over the limit, the connections whose queued replies have gone
//   longest without any write progress (never the charging one) are evicted, enough of them to
//   bring queued() back under the limit once they close: their evict callback runs (it must only
//   post the close to the connection's own thread). Each share is evicted at most once.
// - So queued() exceeds the limit only by what is charged before those closes run: at most one
//   handler batch per worker thread (Connection stops handling PDUs while it has replies queued
//   and the budget is over, see connection.h).
// - Charges and credits touch only atomics; the registry's mutex is taken when a connection opens
//   or closes and when an eviction is chosen (rare by design), never per byte.
#pragma once
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <list>
#include <mutex>

namespace perfsim::server {

// Why a connection is closed from another thread: the reply budget chose it (its client reads
// slowest), or a new connection needed its slot and it had not authenticated (admission.h).
enum class Eviction : uint8_t { kSlowReader, kUnauthenticated };

// What the budget or the admission asks of a connection it chose: to close itself on its own thread.
class Evictable {
 public:
  virtual void evict_async(Eviction why) = 0;

 protected:
  ~Evictable() = default;
};

class ReplyBudget {
 public:
  struct Share {
    std::atomic<size_t> queued{0};
    std::atomic<int64_t> progress_ns{0};  // steady clock: last write progress, or when the queue became non-empty
    std::atomic<bool> evicted{false};
    // A weak reference, not a callback that captures one: no allocation per connection.
    std::weak_ptr<Evictable> conn;
  };
  using Handle = std::list<Share>::iterator;

  explicit ReplyBudget(size_t limit) : limit_(limit) {}
  size_t limit() const { return limit_; }
  size_t queued() const { return queued_.load(std::memory_order_relaxed); }
  size_t peak() const { return peak_.load(std::memory_order_relaxed); }
  uint64_t evictions() const { return evictions_.load(std::memory_order_relaxed); }
  bool over() const { return queued() >= limit_; }

  Handle join(std::weak_ptr<Evictable> conn);
  void leave(Handle h);             // credits what the share still holds
  void charge(Handle h, size_t n);  // replies queued; may evict others
  void credit(Handle h, size_t n);  // bytes the kernel took (write progress)

 private:
  void evict_for(Handle self);
  static int64_t now_ns();

  const size_t limit_;
  std::atomic<size_t> queued_{0}, peak_{0};
  std::atomic<uint64_t> evictions_{0};
  std::mutex mu_;
  std::list<Share> shares_;  // stable addresses; guarded by mu_ (the atomics inside are not)
};

}  // namespace perfsim::server
