// The prefix cache of a HybridCache kept on disk by a PrefixStore (--prefix-cache-dir): reload at
// start, spill on eviction, flush at a clean shutdown. Reloaded KV blocks are cached and
// unreferenced (free capacity, evicted LRU like any other); reloaded snapshots fill the pool.
#pragma once

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

}  // namespace ds
