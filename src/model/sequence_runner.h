// SequenceRunner: one sequence through a model with caches of its own — prefill in chunks, then
// decode — for the CLI (`logits`, `generate`) and tests. The engine batches many sequences instead.
#pragma once

#include <span>
#include <vector>

#include "cache/deltanet_state_slots.h"
#include "cache/hybrid_cache.h"
#include "cache/kv_block_pool.h"
#include "model/kv_cache_dtype.h"
#include "model/qwen35_model.h"

namespace ds {

class SequenceRunner {
 public:
  // Room for `max_positions` tokens in total and `max_call_tokens` per call; KV of `kv_dtype`.
  SequenceRunner(Qwen35Model& model, int64_t max_positions, int64_t max_call_tokens, KvDtype kv_dtype,
                 int64_t block_size = kKvBlockSize);
  // The same with the KV dtype that follows the model's mode (default_kv_dtype).
  SequenceRunner(Qwen35Model& model, int64_t max_positions, int64_t max_call_tokens, int64_t block_size = kKvBlockSize)
      : SequenceRunner(model, max_positions, max_call_tokens, default_kv_dtype(model), block_size) {}

  // Feeds `tokens` in one model call; logits: [rows, vocab] (rows = tokens.size() or 1 or 0).
  Status feed(std::span<const int32_t> tokens, LogitsRows rows, std::vector<float>& logits);
  int64_t position() const { return position_; }

 private:
  Qwen35Model& model_;
  KvBlockPool kv_;
  DeltaNetStateSlots states_;
  Workspace workspace_;
  std::vector<int32_t> blocks_;  // block table: the pool's blocks in order
  static constexpr int32_t kSlot = 0;  // the one state slot
  int64_t position_ = 0;
};

}  // namespace ds
