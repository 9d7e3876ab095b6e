// AttentionKvCache: the manager of the full-attention layers' KV (vLLM v1's single-type manager for
// full attention) — block tables over one KvBlockPool, with BlockPool's reference counts, content
// keys and LRU. Full blocks of prompt tokens are keyed by the prefix key at their end, so a later
// sequence with the same tokens shares them instead of computing them again.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "cache/block_pool.h"
#include "cache/kv_block_pool.h"
#include "cache/prefix_key.h"

namespace ds {

class AttentionKvCache {
 public:
  AttentionKvCache(int64_t num_blocks, int64_t block_size, int64_t num_layers, int64_t num_kv_heads, int64_t head_dim,
                   KvDtype dtype = KvDtype::fp32);

  KvBlockPool& storage() { return storage_; }
  const KvBlockPool& storage() const { return storage_; }
  const BlockPool& pool() const { return pool_; }
  int64_t block_size() const { return storage_.block_size(); }
  int64_t blocks_for(int64_t positions) const { return (positions + block_size() - 1) / block_size(); }

  // How many leading full blocks of `tokens` are cached, up to `max_blocks` (keys[p]: key of
  // tokens[0, p)), and how many of those nobody references now (they count as free capacity).
  // Exact blocks only, or with `decoded`, each block exact where cached so, else decoded.
  struct Match {
    int64_t blocks = 0, unreferenced = 0;
  };
  Match match(std::span<const int32_t> tokens, std::span<const uint64_t> keys, int64_t max_blocks,
              bool decoded = false) const;
  // Appends the first `blocks` cached blocks of that match to an empty table (one reference each).
  void share(std::vector<int32_t>& table, std::span<const int32_t> tokens, std::span<const uint64_t> keys,
             int64_t blocks, bool decoded);
  // Appends blocks until the table covers `positions` (the caller checked that enough are free).
  void grow(std::vector<int32_t>& table, int64_t positions);
  // Keys the table's full blocks within tokens[0, positions) from block `first` on; returns how
  // many leading blocks are keyed now (the next call's `first`).
  int64_t key_blocks(std::span<const int32_t> table, std::span<const int32_t> tokens, std::span<const uint64_t> keys,
                     int64_t first, int64_t positions, KeyFamily family);
  void release(std::vector<int32_t>& table);

  // Persistence (PrefixStore): the tokens a cached block was keyed with; a reloaded block made
  // cached and unreferenced (most recently used), false when no free block is left that caches
  // nothing. Keys and evictions are told to the pool's listener (HybridCache::add_listener).
  std::span<const int32_t> block_tokens(int32_t block) const {
    return {block_tokens_.get() + block * block_size(), static_cast<size_t>(block_size())};
  }
  void set_listener(PrefixCacheListener* listener) { pool_.set_listener(listener); }
  bool adopt_block(uint64_t key, std::span<const int32_t> tokens, const std::byte* kv, Backend& backend);

 private:
  // The cached block that holds tokens[b·B, (b+1)·B) after the same tokens, if any.
  std::optional<int32_t> find_block(std::span<const int32_t> tokens, std::span<const uint64_t> keys, int64_t b,
                                    bool decoded) const;

  KvBlockPool storage_;
  BlockPool pool_;
  // The tokens of each keyed block, to verify a key match; unresident until blocks are keyed.
  std::unique_ptr<int32_t[]> block_tokens_;  // [num_blocks, block_size]
};

}  // namespace ds
