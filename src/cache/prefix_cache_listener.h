// PrefixCacheListener: hears what enters and leaves a HybridCache's prefix cache — a KV block
// given its content key, a keyed block evicted, a DeltaNet snapshot stored or evicted — on the
// thread that changes the cache, as it happens. The prefix store's spill (hybrid_cache_store.h)
// and the index of resumable prefixes (resumable_prefixes.h) listen.
#pragma once

#include <cstdint>

namespace ds {

class PrefixCacheListener {
 public:
  virtual ~PrefixCacheListener() = default;
  // A KV block got the key `key` (its content family key, prefix_key.h): findable from now on.
  virtual void block_keyed(int32_t /*block*/, uint64_t /*key*/) {}
  // A keyed block is reused for other tokens: called before its key is dropped, while its storage
  // still holds the content.
  virtual void block_evicted(int32_t /*block*/, uint64_t /*key*/) {}
  // A new snapshot is held in SnapshotPool entry `entry` (its state may still be being copied in).
  virtual void snapshot_stored(int32_t /*entry*/) {}
  // A snapshot is evicted: called before its entry is overwritten.
  virtual void snapshot_evicted(int32_t /*entry*/) {}
};

}  // namespace ds
