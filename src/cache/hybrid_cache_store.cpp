// Records of a HybridCache's blocks and snapshots, to and from a PrefixStore.
#include "cache/hybrid_cache_store.h"

#include <algorithm>
#include <memory>

namespace ds {
namespace {

// Records are filled into reused ones: their vectors keep their pages mapped between spills.
void fill_block_record(HybridCache& cache, int32_t block, uint64_t key, KvBlockRecord& record) {
  record.key = key;
  const auto tokens = cache.attention().block_tokens(block);
  record.tokens.assign(tokens.begin(), tokens.end());
  record.kv.resize(cache.kv().block_bytes());
  cache.kv().save_block(block, record.kv.data(), cache.backend());
}

void fill_snapshot_record(const SnapshotPool& pool, int32_t entry, SnapshotRecord& record) {
  record.key = pool.key(entry);
  const auto prefix = pool.prefix(entry);
  record.prefix.assign(prefix.begin(), prefix.end());
  const float* state = pool.state(entry);
  record.state.assign(state, state + pool.snapshot_bytes() / sizeof(float));
  record.exact = pool.exact(entry);
  const auto tail = pool.tail(entry);
  record.tail.assign(tail.begin(), tail.end());
}

}  // namespace

PrefixStore::Reloaded reload_prefix_cache(HybridCache& cache, PrefixStore& store) {
  SnapshotPool& snapshots = cache.deltanet().snapshots();
  AttentionKvCache& attention = cache.attention();
  return store.reload(
      snapshots.capacity() - snapshots.size(), attention.pool().free_blocks(),
      [&](SnapshotRecord&& record) {
        const SnapshotPool::Storage storage = snapshots.insert(record.key, record.prefix, record.exact, record.tail.size());
        if (storage.state == nullptr) return false;
        std::copy(record.state.begin(), record.state.end(), storage.state);
        std::copy(record.tail.begin(), record.tail.end(), storage.tail.begin());
        return true;
      },
      [&](KvBlockRecord&& record) {
        return attention.adopt_block(record.key, record.tokens, record.kv.data(), cache.backend());
      });
}

void spill_evictions(HybridCache& cache, PrefixStore& store) {
  cache.attention().set_eviction_observer(
      [&cache, &store, record = std::make_shared<KvBlockRecord>()](int32_t block, uint64_t key) {
        fill_block_record(cache, block, key, *record);
        store.put(*record);
      });
  SnapshotPool& snapshots = cache.deltanet().snapshots();
  snapshots.set_eviction_observer([&snapshots, &store, record = std::make_shared<SnapshotRecord>()](int32_t entry) {
    fill_snapshot_record(snapshots, entry, *record);
    store.put(*record);
  });
}

void flush_prefix_cache(HybridCache& cache, PrefixStore& store) {
  const SnapshotPool& snapshots = cache.deltanet().snapshots();
  SnapshotRecord snapshot;
  for (int32_t entry : snapshots.entries_by_age()) {
    fill_snapshot_record(snapshots, entry, snapshot);
    store.put(snapshot);
  }
  KvBlockRecord block_record;
  for (const auto& [block, key] : cache.attention().pool().cached_blocks_by_age()) {
    fill_block_record(cache, block, key, block_record);
    store.put(block_record);
  }
}

}  // namespace ds
