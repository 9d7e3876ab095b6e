// SequenceRunner: one sequence through a model with caches of its own — prefill in chunks, then
// decode, and with the MTP head its passes over the same positions — for the CLI (`logits`,
// `generate`) and tests. The engine batches many sequences instead.
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
  // with_mtp: room for the MTP head's KV layers and buffers too (mtp()); the model must have the head.
  SequenceRunner(Qwen35Model& model, int64_t max_positions, int64_t max_call_tokens, KvDtype kv_dtype,
                 int64_t block_size = kKvBlockSize, bool with_mtp = false);
  // The same with the KV dtype that follows the model's mode (default_kv_dtype).
  SequenceRunner(Qwen35Model& model, int64_t max_positions, int64_t max_call_tokens, int64_t block_size = kKvBlockSize)
      : SequenceRunner(model, max_positions, max_call_tokens, default_kv_dtype(model), block_size) {}

  // Feeds `tokens` in one model call; logits: [rows, vocab] (rows = tokens.size() or 1 or 0).
  Status feed(std::span<const int32_t> tokens, LogitsRows rows, std::vector<float>& logits);
  // The same, also returning hidden rows after the final norm: hidden [hidden_rows' rows, H].
  Status feed(std::span<const int32_t> tokens, LogitsRows rows, std::vector<float>& logits, LogitsRows hidden_rows,
              std::vector<float>& hidden);
  // The same with mRoPE positions [tokens, 3] and embedding rows at some tokens (SequenceInput's).
  Status feed(std::span<const int32_t> tokens, std::span<const int32_t> positions, std::span<const int32_t> embedding_at,
              std::span<const float> embedding_rows, LogitsRows rows, std::vector<float>& logits);
  int64_t position() const { return position_; }

  // One MTP pass (Qwen35Model::mtp_forward) of draft step `step` over rows at positions start_pos + i:
  // row i pairs pair_hidden row i [H] with next_tokens[i]. start_pos may lie below position() (MTP
  // rows rewrite their KV entries) or run ahead of it (chained drafts). logits [rows, vocab], mtp_hidden
  // [rows, H] after mtp.norm (the next chained step's pair_hidden).
  Status mtp(std::span<const float> pair_hidden, std::span<const int32_t> next_tokens, int64_t start_pos, int64_t step,
             LogitsRows rows, std::vector<float>& logits, std::vector<float>& mtp_hidden);

 private:
  Status cover(int64_t positions);  // blocks for positions [0, positions)

  Qwen35Model& model_;
  bool with_mtp_;
  KvBlockPool kv_;
  DeltaNetStateSlots states_;
  Workspace workspace_;
  std::vector<int32_t> blocks_;  // block table: the pool's blocks in order
  static constexpr int32_t kSlot = 0;  // the one state slot
  int64_t position_ = 0;
};

}  // namespace ds
