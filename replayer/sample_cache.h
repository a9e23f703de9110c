// Decoded samples of the recordings of a serve run, bounded in bytes and shared: every host of
// every recording that names this cache finds a sample another host already decoded. Least
// recently used entries leave first; an entry still referenced by an answer in flight stays alive
// through its shared_ptr, outside the bound (at most one sample per answer being sent).
#pragma once
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace perfsim::replayer {

struct Sample;

class SampleCache {
 public:
  static constexpr size_t kDefaultBytes = 64u << 20;
  explicit SampleCache(size_t max_bytes = kDefaultBytes) : max_(max_bytes) {}

  // The sample cached under (source, key), or null.
  std::shared_ptr<const Sample> find(uint64_t source, uint64_t key);
  // Caches `s` (`bytes` of it) under (source, key), replacing what was there, then evicts down to
  // the bound. A sample larger than the bound is not kept.
  void put(uint64_t source, uint64_t key, std::shared_ptr<const Sample> s, size_t bytes);
  // Drops every entry of `source` (a recording going away).
  void forget(uint64_t source);

  size_t bytes() const;
  size_t entries() const;  // samples held
  size_t max_bytes() const { return max_; }
  // A process-wide cache for recordings made without one (tests, SimulatedHost::load).
  static std::shared_ptr<SampleCache> shared_default();
  // A number no other recording of this process uses.
  static uint64_t new_source();

 private:
  struct Key {
    uint64_t source, key;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return size_t(k.source * 0x9E3779B97F4A7C15ull ^ k.key); }
  };
  struct Entry {
    Key key;
    std::shared_ptr<const Sample> sample;
    size_t bytes;
  };
  void evict_locked();

  const size_t max_;
  mutable std::mutex mu_;
  std::list<Entry> lru_;  // front: most recently used
  std::unordered_map<Key, std::list<Entry>::iterator, KeyHash> map_;
  size_t bytes_ = 0;
};

}  // namespace perfsim::replayer
