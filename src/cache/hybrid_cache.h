// HybridCache: the two caches of a hybrid model behind one owner — attention KV in blocks of one
// pool, DeltaNet conv + recurrent state in per-sequence slots of a second — sized from a byte
// budget at start-up. Changes are planned (CachePlan) and applied in one step (llama.cpp's
// plan/apply), so a scheduler can decide a whole step against free counts before anything moves.
#pragma once

#include <cstdint>
#include <vector>

#include "cache/deltanet_state_slots.h"
#include "cache/kv_block_pool.h"
#include "io/model_config.h"
#include "util/status.h"

namespace ds {

// Per-sequence cache shapes of a model (zero layers of a kind: that cache is empty).
struct CacheGeometry {
  int64_t block_size = 16;  // KV tokens per block; divides the 64-token DeltaNet chunk
  int64_t attention_layers = 0, num_kv_heads = 0, head_dim = 0;
  int64_t deltanet_layers = 0, conv_channels = 0, conv_history = 0, num_v_heads = 0, k_dim = 0, v_dim = 0;

  static CacheGeometry of(const TextConfig& config);
  uint64_t block_bytes() const;  // K + V of every attention layer for block_size tokens (fp32)
  uint64_t slot_bytes() const;   // conv history + recurrent state of every DeltaNet layer (fp32)
};

struct CacheCapacity {
  int64_t num_blocks = 0;
  int64_t num_slots = 0;
};

// Splits `budget_bytes`: a state slot for each of up to `max_seqs` sequences (at most half the
// budget), the rest in KV blocks. Errors when the budget cannot hold one sequence of 64 tokens.
Result<CacheCapacity> size_cache(const CacheGeometry& geometry, uint64_t budget_bytes, int64_t max_seqs);

// What one sequence holds: its block table (KV of positions 0 .. blocks·block_size − 1) and slot.
struct SequenceCache {
  std::vector<int32_t> blocks;
  int32_t slot = -1;  // -1: none yet
  bool empty() const { return blocks.empty() && slot < 0; }
};

// One step's cache changes: sequences that give everything back (preempted), then sequences that
// must cover `positions` tokens (a slot is taken for any that has none).
struct CachePlan {
  struct Grow {
    SequenceCache* sequence;
    int64_t positions;
  };
  std::vector<SequenceCache*> release;
  std::vector<Grow> grow;
};

class HybridCache {
 public:
  HybridCache(const CacheGeometry& geometry, const CacheCapacity& capacity);

  const CacheGeometry& geometry() const { return geometry_; }
  KvBlockPool& kv() { return kv_; }
  DeltaNetStateSlots& states() { return states_; }
  int64_t num_blocks() const { return kv_.num_blocks(); }
  int64_t num_slots() const { return num_slots_; }
  int64_t free_blocks() const { return kv_.free_blocks(); }
  int64_t free_slots() const { return states_.free_slots(); }
  // Blocks that hold `positions` tokens.
  int64_t blocks_for(int64_t positions) const { return (positions + geometry_.block_size - 1) / geometry_.block_size; }
  // Positions one sequence can reach when it has the whole pool.
  int64_t max_positions() const { return kv_.num_blocks() * geometry_.block_size; }
  uint64_t bytes() const { return kv_.bytes() + states_.bytes(); }

  // Applies a plan the scheduler checked against the free counts (a plan that does not fit is a
  // scheduler bug and aborts).
  void apply(const CachePlan& plan);
  // Returns every block and the slot of a sequence (finished, cancelled, preempted).
  void release(SequenceCache& sequence);

 private:
  CacheGeometry geometry_;
  int64_t num_slots_;
  KvBlockPool kv_;
  DeltaNetStateSlots states_;
};

}  // namespace ds
