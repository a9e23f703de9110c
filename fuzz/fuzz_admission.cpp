// The slot policy under a flood (server/admission.h, issue 54): who keeps a connection slot when
// clients without credentials open connections as fast as they can, over TCP and smbd's pipes
// alike. The input: a byte for the slot limit (1-16), then one byte per event, acted out on an
// Admission (admit: below the limit, or by evicting the oldest untrusted connection) with
// connections that only record what they are asked:
//   0, 1  a client connects (untrusted: a flood's or a collector's, until it authenticates)
//   2     connection N authenticates         3  connection N closes (the peer went away)
//   4     the posted closes of evicted connections run
// N is the next byte, modulo the connections open. A model kept here by the contract's words is
// checked after every event: an authenticated connection is never evicted, nobody twice; the one
// evicted is the oldest untrusted one not already evicted; a new connection is refused only when
// the slots are full and every untrusted one is already on its way out; the counts agree.
#include <cstddef>
#include <memory>
#include <vector>

#include "fuzz/fuzz_input.h"
#include "server/admission.h"

using namespace perfsim;

namespace {

struct FakeConnection final : server::Evictable {
  int asked = 0;  // evict_async calls
  void evict_async(server::Eviction why) override {
    fuzz::require(why == server::Eviction::kUnauthenticated);
    ++asked;
  }
};

struct Slot {
  std::shared_ptr<FakeConnection> conn = std::make_shared<FakeConnection>();
  server::Admission::Handle handle{};
  bool listed = true;    // joined and not yet left (untrusted)
  bool evicted = false;  // marked by evict_oldest; its close is posted
  uint64_t joined = 0;
};

class Flood {
 public:
  explicit Flood(size_t limit) : limit_(limit) {}

  void connect() {
    const Slot* oldest = oldest_untrusted();
    const bool room = open_.size() < limit_;
    const bool admitted = admission_.admit(open_.size(), limit_);
    // Refused only at the limit with no untrusted connection left to close for it.
    fuzz::require(admitted == (room || oldest != nullptr));
    if (!room && oldest) {
      fuzz::require(oldest->conn->asked == 1);
      mark_evicted(oldest);
    }
    if (!admitted) return;
    Slot s;
    s.joined = next_join_++;
    s.handle = admission_.join(s.conn);
    open_.push_back(std::move(s));
  }

  void authenticate(size_t i) {
    if (open_.empty()) return;
    Slot& s = open_[i % open_.size()];
    if (!s.listed) return;
    admission_.leave(s.handle);  // an evicted one may log on before its posted close runs
    s.listed = false;
  }

  void close(size_t i) {
    if (open_.empty()) return;
    close_at(i % open_.size());
  }

  void run_posted_closes() {
    for (size_t i = open_.size(); i-- > 0;)
      if (open_[i].evicted) close_at(i);
  }

  void check() const {
    size_t untrusted = 0;
    for (const Slot& s : open_) {
      fuzz::require(s.conn->asked == (s.evicted ? 1 : 0));  // asked once, and only the evicted
      if (s.listed && !s.evicted) ++untrusted;
    }
    fuzz::require(admission_.untrusted() == untrusted);
    fuzz::require(admission_.evictions() == evictions_);
    fuzz::require(open_.size() <= limit_ + pending_closes());
  }

 private:
  const Slot* oldest_untrusted() const {
    const Slot* best = nullptr;
    for (const Slot& s : open_)
      if (s.listed && !s.evicted && (!best || s.joined < best->joined)) best = &s;
    return best;
  }

  void mark_evicted(const Slot* s) {
    for (Slot& o : open_)
      if (&o == s) o.evicted = true;
    ++evictions_;
  }

  size_t pending_closes() const {
    size_t n = 0;
    for (const Slot& s : open_) n += s.evicted ? 1 : 0;
    return n;
  }

  void close_at(size_t i) {
    if (open_[i].listed) admission_.leave(open_[i].handle);
    open_.erase(open_.begin() + static_cast<std::ptrdiff_t>(i));
  }

  server::Admission admission_;
  std::vector<Slot> open_;
  size_t limit_;
  uint64_t next_join_ = 0;
  uint64_t evictions_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  Flood flood(1 + in.u8() % 16);
  // Bounded per input: the model's scans are linear in the open connections (at most 16 + pending).
  for (int events = 0; events < 4096 && !in.empty(); ++events) {
    switch (in.u8() % 5) {
      case 0:
      case 1:
        flood.connect();
        break;
      case 2:
        flood.authenticate(in.u8());
        break;
      case 3:
        flood.close(in.u8());
        break;
      case 4:
        flood.run_posted_closes();
        break;
    }
    flood.check();
  }
  return 0;
}
