// Which prompt prefixes a HybridCache can resume, told block by block to an observer (the KV
// event publisher, so routers learn where a conversation is cached).
//
// An attention-only cache can resume any prefix whose KV blocks it holds. A hybrid one also needs
// the DeltaNet state there, and holds it only where it took a snapshot; a prompt resumes at the
// longest prefix that ends at a snapshot and whose blocks are all cached (HybridCache::find_prefix).
// So a full KV block counts as resumable exactly while some snapshot at or beyond its end, on the
// same tokens, is held together with every block before that snapshot — an exact snapshot with
// exact blocks, a decoded one (rule 4) with blocks of either family. It stops counting as soon as
// either that block or the last such snapshot is evicted. A router that sends a prompt to a
// replica announcing k of its blocks then finds the replica holding those k blocks and a state at
// or beyond them; it resumes at its last snapshot within them (for a chat's next turn, the message
// start just before the new tokens, docs/engine.md).
//
// Blocks are named by their content key: the exact-family prefix key of the tokens up to the
// block's end (prefix_key.h), so two replicas of one model name the same prefix alike, whichever
// family (exact or decoded) the block they hold is in.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "cache/prefix_cache_listener.h"
#include "cache/snapshot_pool.h"

namespace ds {

class HybridCache;

class ResumablePrefixObserver {
 public:
  virtual ~ResumablePrefixObserver() = default;
  // A run of full blocks became resumable. `keys` names them in order ([n]), `parent` the block
  // before the run (none: the run starts at the first token), `tokens` their tokens ([n · block_size]).
  virtual void blocks_resumable(std::optional<uint64_t> parent, std::span<const uint64_t> keys,
                                std::span<const int32_t> tokens) = 0;
  // Blocks that stopped being resumable (each was announced by blocks_resumable before).
  virtual void blocks_not_resumable(std::span<const uint64_t> keys) = 0;
};

class ResumablePrefixes : public PrefixCacheListener {
 public:
  // `salt`: the cache's prefix-key salt (CacheGeometry::identity()); `snapshots`: the pool whose
  // entries snapshot_stored names.
  ResumablePrefixes(const SnapshotPool& snapshots, uint64_t salt, int64_t block_size, ResumablePrefixObserver& observer);

  void block_keyed(int32_t block, uint64_t key) override;
  void block_evicted(int32_t block, uint64_t key) override;
  void snapshot_stored(int32_t entry) override;
  void snapshot_evicted(int32_t entry) override;

  int64_t resumable_blocks() const { return static_cast<int64_t>(covered_.size()); }

 private:
  struct Snapshot {
    int32_t entry = -1;           // in the pool, which keeps its tokens until snapshot_evicted
    std::vector<uint64_t> keys;   // [p / block_size] content key of each full block
    bool exact = true;
    int64_t missing = 0;          // blocks not cached in a family it can use
  };
  // Block b of the snapshot is cached in a family the snapshot can resume with.
  bool usable(const Snapshot& s, size_t b) const;
  // A pool key was cached or evicted: updates the snapshots waiting on it.
  void block_changed(uint64_t key, bool cached);
  void cover(const Snapshot& s);    // s became resumable
  void uncover(const Snapshot& s);  // s stopped being resumable

  const SnapshotPool& snapshots_;
  uint64_t salt_;
  int64_t block_size_;
  ResumablePrefixObserver& observer_;
  std::unordered_map<int32_t, Snapshot> held_;                                  // by snapshot pool entry
  std::unordered_map<uint64_t, std::vector<std::pair<int32_t, size_t>>> needs_;  // pool key → (entry, block)
  std::unordered_set<uint64_t> cached_;                                         // pool keys of keyed blocks
  std::unordered_map<uint64_t, int32_t> covered_;  // content key → resumable snapshots through that block
};

// From now on every change of what `cache` can resume is told to `observer` (which must outlive
// the cache). Attach before the cache is reloaded from disk, so the reload is announced too.
void announce_resumable_prefixes(HybridCache& cache, ResumablePrefixObserver& observer);

}  // namespace ds
