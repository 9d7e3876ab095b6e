// The prefix cache of a HybridCache kept on disk by a PrefixStore (--prefix-cache-dir): reload at
// start, spill on eviction, flush at a clean shutdown. Reloaded KV blocks are cached and
// unreferenced (free capacity, evicted LRU like any other); reloaded snapshots fill the pool.
#pragma once

#include <deque>

#include "cache/hybrid_cache.h"
#include "cache/prefix_store.h"

namespace ds {

// Reloads the newest records that fit into free capacity: at most the pool's snapshot capacity,
// at most the blocks that cache nothing now. Call before any sequence runs.
PrefixStore::Reloaded reload_prefix_cache(HybridCache& cache, PrefixStore& store);
// From now on, every KV block and snapshot the cache evicts is written to `store` first
// (`store` must outlive the cache's use).
void spill_evictions(HybridCache& cache, PrefixStore& store);
// Writes every cached block and snapshot still in memory, least recently used first (so the
// on-disk order keeps their recency).
void flush_prefix_cache(HybridCache& cache, PrefixStore& store);

// What the cache took (blocks keyed, snapshots stored) and the store does not hold yet, in the
// order taken: write_one() writes the oldest still cached. The engine writes while it is idle, so a
// process that is killed rather than stopped leaves on disk what it held when it last went idle.
class PendingWrites : public PrefixCacheListener {
 public:
  // Remembers at most twice what the cache can hold: under load that never lets the engine idle,
  // the oldest are forgotten (most are evicted by then, and spilled as they were).
  PendingWrites(HybridCache& cache, PrefixStore& store)
      : cache_(cache), store_(store), limit_(2 * static_cast<size_t>(cache.num_blocks() + cache.snapshots().capacity())) {}
  bool empty() const { return queue_.empty(); }
  void write_one();

  void block_keyed(int32_t block, uint64_t key) override { remember({false, block, key}); }
  void snapshot_stored(int32_t entry) override { remember({true, entry, cache_.snapshots().key(entry)}); }

 private:
  struct Taken {
    bool snapshot;
    int32_t id;  // block, or snapshot pool entry
    uint64_t key;
  };
  void remember(Taken taken) {
    if (queue_.size() >= limit_) queue_.pop_front();
    queue_.push_back(taken);
  }
  HybridCache& cache_;
  PrefixStore& store_;
  size_t limit_;
  std::deque<Taken> queue_;
  KvBlockRecord block_;  // reused: their vectors keep their pages mapped between writes
  SnapshotRecord snapshot_;
};
// Starts remembering what `cache` takes for `store` (attach after the reload); the cache owns it.
PendingWrites& remember_writes(HybridCache& cache, PrefixStore& store);

}  // namespace ds
