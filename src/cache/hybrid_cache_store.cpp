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

namespace {

// Writes each evicted block and snapshot to the store while it still holds its content.
class Spill : public PrefixCacheListener {
 public:
  Spill(HybridCache& cache, PrefixStore& store) : cache_(cache), store_(store) {}
  void block_evicted(int32_t block, uint64_t key) override {
    fill_block_record(cache_, block, key, block_);
    store_.put(block_);
  }
  void snapshot_evicted(int32_t entry) override {
    fill_snapshot_record(cache_.deltanet().snapshots(), entry, snapshot_);
    store_.put(snapshot_);
  }

 private:
  HybridCache& cache_;
  PrefixStore& store_;
  KvBlockRecord block_;  // reused: their vectors keep their pages mapped between spills
  SnapshotRecord snapshot_;
};

}  // namespace

void spill_evictions(HybridCache& cache, PrefixStore& store) { cache.add_listener(std::make_unique<Spill>(cache, store)); }

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

namespace ds {

void PendingWrites::write_one() {
  const Taken taken = queue_.front();
  queue_.pop_front();
  if (taken.snapshot) {
    // Evicted since: the spill wrote it then.
    if (!cache_.snapshots().holds(taken.id, taken.key)) return;
    fill_snapshot_record(cache_.snapshots(), taken.id, snapshot_);
    store_.put(snapshot_);
  } else {
    if (cache_.attention().pool().find(taken.key) != taken.id) return;
    fill_block_record(cache_, taken.id, taken.key, block_);
    store_.put(block_);
  }
}

PendingWrites& remember_writes(HybridCache& cache, PrefixStore& store) {
  auto pending = std::make_unique<PendingWrites>(cache, store);
  PendingWrites& out = *pending;
  cache.add_listener(std::move(pending));
  return out;
}

}  // namespace ds
