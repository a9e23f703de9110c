#include "replayer/sample_cache.h"

#include <atomic>

namespace perfsim::replayer {

std::shared_ptr<const Sample> SampleCache::find(uint64_t source, uint64_t key) {
  std::lock_guard lock(mu_);
  auto it = map_.find(Key{source, key});
  if (it == map_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->sample;
}

void SampleCache::put(uint64_t source, uint64_t key, std::shared_ptr<const Sample> s, size_t bytes) {
  std::lock_guard lock(mu_);
  const Key k{source, key};
  if (auto it = map_.find(k); it != map_.end()) {
    bytes_ -= it->second->bytes;
    lru_.erase(it->second);
    map_.erase(it);
  }
  if (bytes > max_) return;
  lru_.push_front(Entry{k, std::move(s), bytes});
  map_[k] = lru_.begin();
  bytes_ += bytes;
  evict_locked();
}

void SampleCache::evict_locked() {
  while (bytes_ > max_ && !lru_.empty()) {
    bytes_ -= lru_.back().bytes;
    map_.erase(lru_.back().key);
    lru_.pop_back();
  }
}

void SampleCache::forget(uint64_t source) {
  std::lock_guard lock(mu_);
  for (auto it = lru_.begin(); it != lru_.end();) {
    if (it->key.source != source) {
      ++it;
      continue;
    }
    bytes_ -= it->bytes;
    map_.erase(it->key);
    it = lru_.erase(it);
  }
}

size_t SampleCache::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

size_t SampleCache::entries() const {
  std::lock_guard lock(mu_);
  return lru_.size();
}

std::shared_ptr<SampleCache> SampleCache::shared_default() {
  static const std::shared_ptr<SampleCache> cache = std::make_shared<SampleCache>();
  return cache;
}

uint64_t SampleCache::new_source() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1);
}

}  // namespace perfsim::replayer
