// StepModel: what the engine needs from a model — its cache shapes and one forward over a batch
// of sequences whose caches live in a HybridCache. Qwen35StepModel adapts the real model; tests
// plug in fakes to exercise the scheduler and engine loop in microseconds.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "cache/hybrid_cache.h"
#include "model/deltanet_record.h"
#include "model/forward_batch.h"
#include "util/status.h"
#include "vision/prompt_image.h"

namespace ds {

// How a model with a vision tower lays images out in a prompt.
struct ImageTokenSpec {
  int32_t image_token_id = 0;  // <|image_pad|>: one per merged patch of an image
  int64_t merge_size = 2;      // spatial merge: an image takes t·h·w / merge² tokens
};

class StepModel {
 public:
  virtual ~StepModel() = default;
  virtual int64_t vocab_size() const = 0;
  virtual CacheGeometry cache_geometry() const = 0;
  virtual int64_t max_position_embeddings() const = 0;
  // The backend that owns the cache memory: the cache's copies (snapshots) run on it.
  virtual Backend& backend() = 0;
  // Sizes per-call buffers for batches of up to `max_batch_tokens` tokens (called once, at start).
  virtual void reserve(int64_t max_batch_tokens) = 0;
  // Runs the batch; logits [batch.logits_rows(), vocab] in batch order.
  virtual Status forward(const ForwardBatch& batch, HybridCache& cache, float* logits) = 0;

  // Speculative decoding (models that support it): sizes `record` for decode calls of up to `rows`
  // tokens, and rolls a slot's DeltaNet state — put back by the caller to what it was before a recorded
  // call — to the end of that call's first `rows` rows (Qwen35Model::replay_deltanet).
  virtual Status reserve_record(DeltaNetRecord& record, int64_t rows) {
    (void)record, (void)rows;
    return Status::error("this model does not support speculative decoding");
  }
  virtual Status replay_deltanet(const DeltaNetRecord& record, int64_t rows, HybridCache& cache, int32_t slot) {
    (void)record, (void)rows, (void)cache, (void)slot;
    return Status::error("this model does not support speculative decoding");
  }

  // The MTP head (docs/mtp.md), in models made with it: its layers (0: none), the hidden rows the last
  // forward returned (SequenceInput::hidden) [rows, hidden_size] in batch order, and one head pass
  // (Qwen35Model::mtp_forward: pair_hidden [batch.total_tokens(), hidden_size], logits
  // [batch.logits_rows(), draft_vocab_size()], mtp_hidden [batch.hidden_rows(), hidden_size]).
  virtual int64_t num_mtp_layers() const { return 0; }
  // The head's draft vocabulary (Qwen35Model::set_mtp_vocab): its logits cover tokens [0, n); 0: all.
  virtual Status set_draft_vocab(int64_t n) {
    (void)n;
    return Status::error("this model has no MTP head");
  }
  // The head's draft vocabulary in a token map's order (Qwen35Model::set_mtp_tokens): its logit i is
  // token tokens[i]; the head gathers its own weight of those rows (draft_head_bytes()).
  virtual Status set_draft_tokens(std::span<const int32_t> tokens) {
    (void)tokens;
    return Status::error("this model has no MTP head");
  }
  virtual int64_t draft_vocab_size() const { return vocab_size(); }
  // The weight bytes one head step reads (its layer and its lm_head rows) ÷ those of one decode step:
  // what a draft costs in decode steps where both only stream their weights — adaptive k's starting
  // point before the engine measures it (draft_cost_meter.h). 0: no head.
  virtual double head_step_weight_share() { return 0; }
  virtual uint64_t draft_head_bytes() const { return 0; }  // a gathered head's own bytes; 0: none
  virtual int64_t hidden_size() const { return 0; }
  virtual std::span<const float> hidden_rows() const { return {}; }
  virtual Status mtp_forward(const ForwardBatch& batch, int64_t step, const float* pair_hidden, HybridCache& cache,
                             float* logits, float* mtp_hidden) {
    (void)batch, (void)step, (void)pair_hidden, (void)cache, (void)logits, (void)mtp_hidden;
    return Status::error("this model has no MTP head");
  }

  // Images (models with a vision tower; nullopt: the model takes text only) and the merger rows
  // [tokens, hidden] of one image, which stand in for its pad tokens' embeddings.
  virtual std::optional<ImageTokenSpec> image_tokens() const { return std::nullopt; }
  virtual Result<std::vector<float>> encode_image(const PromptImage& image) {
    (void)image;
    return Status::error("this model has no vision tower");
  }
};

}  // namespace ds
