// HybridCache: the caches of a hybrid model behind one owner, one manager per layer kind —
// AttentionKvCache (KV in shared, content-keyed blocks) and DeltaNetStateCache (a state slot per
// sequence, snapshots at prompt chunk boundaries) — sized from byte budgets at start-up. Changes
// are planned (CachePlan) and applied in one step (llama.cpp's plan/apply), so a scheduler can
// decide a whole step against free counts before anything moves.
//
// Prefix cache: a prompt restarts from the longest prefix that ends at a DeltaNet snapshot and
// whose KV blocks are all cached (a hybrid layer stack needs both). Prompt snapshots sit on the
// 64-token chunk grid (SnapshotPolicy), so such a hit is whole blocks and bit-identical to
// computing it (KeyFamily::exact). A finished generation is snapshotted where it stopped, with the
// KV tail of its last block (rule 4): a client that sends prompt + completion back continues from
// there, to rounding only (KeyFamily::decoded; a sequence started from it stays in that family).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "cache/attention_kv_cache.h"
#include "cache/deltanet_state_cache.h"
#include "cache/prefix_cache_listener.h"
#include "cache/prefix_key.h"
#include "cache/snapshot_policy.h"
#include "io/model_config.h"
#include "util/status.h"

namespace ds {

// Per-sequence cache shapes of a model (zero layers of a kind: that cache is empty).
struct CacheGeometry {
  int64_t block_size = kKvBlockSize;
  int64_t attention_layers = 0, num_kv_heads = 0, head_dim = 0;
  KvDtype kv_dtype = KvDtype::fp32;  // element type of the KV blocks (bf16: half the bytes per block)
  int64_t deltanet_layers = 0, conv_channels = 0, conv_history = 0, num_v_heads = 0, k_dim = 0, v_dim = 0;

  static CacheGeometry of(const TextConfig& config, KvDtype kv_dtype = KvDtype::fp32);
  uint64_t block_bytes() const;  // K + V of every attention layer for block_size tokens (kv_dtype)
  uint64_t slot_bytes() const;   // conv history + recurrent state of every DeltaNet layer (fp32)
  uint64_t identity() const;     // a hash of the shapes: the salt of prefix keys
};

struct CacheCapacity {
  int64_t num_blocks = 0;
  int64_t num_slots = 0;
  int64_t num_snapshots = 0;    // 0: no prefix cache
  int64_t num_spare_slots = 0;  // a spare state slot per slot with speculative decoding, else 0
};

// Splits `budget_bytes`: a state slot for each of up to `max_seqs` sequences (at most half the
// budget; with `spare_slots` two a sequence: its slot and the spare a speculative verify writes
// into), the rest in KV blocks; snapshots get `prefix_cache_bytes` of their own (a state slot and a
// KV block each: the tail a rule-4 snapshot carries). Errors when the budget cannot hold one
// sequence of 64 tokens.
Result<CacheCapacity> size_cache(const CacheGeometry& geometry, uint64_t budget_bytes, int64_t max_seqs,
                                 uint64_t prefix_cache_bytes = 0, bool spare_slots = false);

// What one sequence holds: its block table (KV of positions 0 .. blocks·block_size − 1) and slot.
struct SequenceCache {
  std::vector<int32_t> blocks;
  int32_t slot = -1;         // -1: none yet
  int32_t spare = -1;        // held with the slot when the cache has spares (CacheCapacity::num_spare_slots)
  int64_t keyed_blocks = 0;  // leading blocks whose content key is set (shared or registered)
  bool exact = true;         // computed by grid-aligned prefills from the empty state (KeyFamily)
  bool empty() const { return blocks.empty() && slot < 0; }
};

// A cached prefix a sequence can start from: `tokens` positions, at a snapshot. Exact hits end on
// the 64-token grid; a decoded hit may end inside a block, whose tail then comes from the snapshot
// into a new block (counted by blocks_for(tokens) − blocks).
struct PrefixHit {
  int64_t tokens = 0;
  int64_t blocks = 0;        // full KV blocks it shares
  int64_t unreferenced = 0;  // of those, blocks now counted as free capacity
  int32_t snapshot = -1;     // DeltaNet snapshot to restore (-1: none, tokens == 0)
  bool exact = true;         // false: a KeyFamily::decoded snapshot (rule 4, or after one)
};

// One step's cache changes: sequences that give everything back (preempted), sequences that start
// from a cached prefix, then sequences that must cover `positions` tokens (a slot is taken for any
// that has none).
struct CachePlan {
  struct Restore {
    SequenceCache* sequence;
    PrefixHit hit;
    std::span<const int32_t> prompt;
    std::span<const uint64_t> keys;  // the prompt's prefix keys
  };
  struct Grow {
    SequenceCache* sequence;
    int64_t positions;
  };
  std::vector<SequenceCache*> release;
  std::vector<Restore> restore;
  std::vector<Grow> grow;
};

class HybridCache {
 public:
  // `backend` copies state and KV between the caches and snapshots (Backend::copy).
  HybridCache(const CacheGeometry& geometry, const CacheCapacity& capacity, Backend& backend, SnapshotPolicy policy = {});
  HybridCache(const HybridCache&) = delete;  // its pools point at its listeners
  HybridCache& operator=(const HybridCache&) = delete;

  const CacheGeometry& geometry() const { return geometry_; }
  KvBlockPool& kv() { return attention_.storage(); }
  DeltaNetStateSlots& states() { return deltanet_.storage(); }
  int64_t num_blocks() const { return attention_.pool().num_blocks(); }
  int64_t num_slots() const { return num_slots_; }
  int64_t free_blocks() const { return attention_.pool().free_blocks(); }
  int64_t free_slots() const { return deltanet_.free_slots(); }
  // Blocks that hold `positions` tokens.
  int64_t blocks_for(int64_t positions) const { return attention_.blocks_for(positions); }
  // Positions one sequence can reach when it has the whole pool.
  int64_t max_positions() const { return num_blocks() * geometry_.block_size; }
  uint64_t bytes() const { return kv_bytes() + deltanet_.storage().bytes() + snapshot_bytes(); }

  // Prefix cache.
  bool prefix_caching() const { return deltanet_.snapshots().capacity() > 0; }
  // [prompt.size() + 1]; `contents`: the prompt's images, whose hashes enter the keys (prefix_key.h).
  std::vector<uint64_t> prefix_keys(std::span<const int32_t> prompt, std::span<const KeyedContent> contents = {}) const;
  std::vector<int64_t> snapshot_positions(std::span<const int32_t> prompt) const;
  // The longest cached prefix of `prompt` ending at or before `limit` (none when caching is off):
  // the longest exact hit, unless a decoded snapshot reaches further.
  PrefixHit find_prefix(std::span<const int32_t> prompt, std::span<const uint64_t> keys, int64_t limit) const;
  // After a forward computed prompt[0, computed) into `sequence`: keys its new full blocks, and
  // snapshots its DeltaNet state when `snapshot` (computed is one of its snapshot positions).
  void cache_prefix(SequenceCache& sequence, std::span<const int32_t> prompt, std::span<const uint64_t> keys,
                    int64_t computed, bool snapshot);
  // A generation that finished with tokens[0, computed) in `sequence` (prompt_keys: the keys of its
  // prompt, a prefix of tokens): keys its remaining full blocks and snapshots it there, tail
  // included — all KeyFamily::decoded (rule 4).
  void cache_generation(SequenceCache& sequence, std::span<const int32_t> tokens, std::span<const uint64_t> prompt_keys,
                        int64_t computed);

  // Applies a plan the scheduler checked against the free counts (a plan that does not fit is a
  // scheduler bug and aborts).
  void apply(const CachePlan& plan);
  // Returns every block (cached ones stay findable until evicted) and the slot of a sequence.
  void release(SequenceCache& sequence);

  // Gauges and counters for metrics.
  int64_t cached_blocks() const { return attention_.pool().cached_blocks(); }
  int64_t block_evictions() const { return attention_.pool().evictions(); }
  const SnapshotPool& snapshots() const { return deltanet_.snapshots(); }
  uint64_t kv_bytes() const { return attention_.storage().bytes(); }
  // What the snapshots may take: a state and a KV tail block each.
  uint64_t snapshot_bytes() const {
    return static_cast<uint64_t>(snapshots().capacity()) * (snapshots().snapshot_bytes() + geometry_.block_bytes());
  }

  // The managers themselves, for the prefix store (hybrid_cache_store.h).
  AttentionKvCache& attention() { return attention_; }
  DeltaNetStateCache& deltanet() { return deltanet_; }
  Backend& backend() { return backend_; }

  // Listeners of the prefix cache (the prefix store's spill, the index of resumable prefixes),
  // told of every keyed and evicted block and stored and evicted snapshot, in the order added. The
  // cache owns them.
  void add_listener(std::unique_ptr<PrefixCacheListener> listener) { listeners_.all.push_back(std::move(listener)); }

 private:
  // Fans each change out to every listener.
  struct Listeners : PrefixCacheListener {
    std::vector<std::unique_ptr<PrefixCacheListener>> all;
    void block_keyed(int32_t block, uint64_t key) override {
      for (auto& l : all) l->block_keyed(block, key);
    }
    void block_evicted(int32_t block, uint64_t key) override {
      for (auto& l : all) l->block_evicted(block, key);
    }
    void snapshot_stored(int32_t entry) override {
      for (auto& l : all) l->snapshot_stored(entry);
    }
    void snapshot_evicted(int32_t entry) override {
      for (auto& l : all) l->snapshot_evicted(entry);
    }
  };

  // Snapshots the sequence's state after prefix (and the filled part of its last block when the
  // prefix ends inside one), under `key`.
  void take_snapshot(const SequenceCache& sequence, uint64_t key, std::span<const int32_t> prefix);

  // A slot for `s` (empty, or from `snapshot` ≥ 0) and, when the cache has spares, its spare.
  void take_slot(SequenceCache& s, int32_t snapshot);

  CacheGeometry geometry_;
  Backend& backend_;
  SnapshotPolicy policy_;
  int64_t num_slots_;
  AttentionKvCache attention_;
  DeltaNetStateCache deltanet_;
  bool spares_;  // every sequence's slot comes with a spare
  Listeners listeners_;
};

}  // namespace ds
