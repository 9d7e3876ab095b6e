// Qwen35StepModel: the Qwen3.5 model and its activation workspace as the engine's StepModel; made
// with_mtp, also the checkpoint's MTP head: its KV layers in the cache geometry (so --cache-memory
// counts them), its workspace buffers, and the main model's hidden rows it reads.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "engine/step_model.h"
#include "model/deltanet_record.h"
#include "model/kv_cache_dtype.h"
#include "model/qwen35_model.h"
#include "vision/vision_model.h"

namespace ds {

class Qwen35StepModel : public StepModel {
 public:
  // KV blocks of `kv_dtype` (--kv-cache-dtype); without one, the dtype that follows the model's mode.
  // with_mtp: a model without the head (has_mtp() false) gets none (num_mtp_layers() is then 0).
  Qwen35StepModel(Qwen35Model& model, KvDtype kv_dtype, bool with_mtp = false)
      : model_(model), kv_dtype_(kv_dtype), with_mtp_(with_mtp && model.has_mtp()) {}
  explicit Qwen35StepModel(Qwen35Model& model) : Qwen35StepModel(model, default_kv_dtype(model)) {}
  int64_t vocab_size() const override { return model_.config().vocab_size; }
  CacheGeometry cache_geometry() const override {
    CacheGeometry geometry = CacheGeometry::of(model_.config(), kv_dtype_);
    geometry.attention_layers = model_.num_kv_layers(with_mtp_);  // the head's layers after the model's
    return geometry;
  }
  int64_t max_position_embeddings() const override { return model_.config().max_position_embeddings; }
  Backend& backend() override { return model_.backend(); }
  void reserve(int64_t max_batch_tokens) override {
    workspace_ = std::make_unique<Workspace>(model_.config(), max_batch_tokens, with_mtp_);
    if (with_mtp_) hidden_.resize(static_cast<size_t>(max_batch_tokens * model_.config().hidden_size));
  }
  Status forward(const ForwardBatch& batch, HybridCache& cache, float* logits) override {
    hidden_count_ = batch.hidden_rows();
    return model_.forward(batch, cache.kv(), cache.states(), *workspace_, logits, hidden_.empty() ? nullptr : hidden_.data());
  }
  Status reserve_record(DeltaNetRecord& record, int64_t rows) override {
    record.reserve(model_.config(), rows);
    return {};
  }
  Status replay_deltanet(const DeltaNetRecord& record, int64_t rows, HybridCache& cache, int32_t slot) override {
    return model_.replay_deltanet(record, rows, cache.states(), slot, *workspace_);
  }
  int64_t num_mtp_layers() const override { return with_mtp_ ? model_.num_mtp_layers() : 0; }
  Status set_draft_vocab(int64_t n) override { return model_.set_mtp_vocab(n); }
  Status set_draft_tokens(std::span<const int32_t> tokens) override { return model_.set_mtp_tokens(tokens); }
  int64_t draft_vocab_size() const override { return model_.mtp_vocab(); }
  double head_step_weight_share() override { return model_.mtp_step_weight_share(); }
  uint64_t draft_head_bytes() const override { return model_.mtp_head_bytes(); }
  int64_t hidden_size() const override { return model_.config().hidden_size; }
  std::span<const float> hidden_rows() const override {
    return std::span<const float>(hidden_).first(static_cast<size_t>(hidden_count_ * model_.config().hidden_size));
  }
  Status mtp_forward(const ForwardBatch& batch, int64_t step, const float* pair_hidden, HybridCache& cache, float* logits,
                     float* mtp_hidden) override {
    if (!with_mtp_) return Status::error("this step model was made without the MTP head");
    return model_.mtp_forward(batch, step, pair_hidden, cache.kv(), *workspace_, logits, mtp_hidden);
  }

  // Images through the checkpoint's tower (without: text only). `vision` must outlive this.
  void attach_vision(const VisionModel& vision) { vision_ = &vision; }
  std::optional<ImageTokenSpec> image_tokens() const override {
    if (vision_ == nullptr) return std::nullopt;
    return ImageTokenSpec{vision_->image_token_id, vision_->merge_size()};
  }
  Result<std::vector<float>> encode_image(const PromptImage& image) override {
    if (vision_ == nullptr) return StepModel::encode_image(image);
    // Fast mode rounds the tower's matmul inputs to bf16, as it does the text model's.
    DS_ASSIGN_OR_RETURN(VisionOutput out, vision_->tower->forward(model_.backend(), *image.pixel_values,
                                                                  std::span(&image.grid, 1),
                                                                  model_.mode() == ComputeMode::fast));
    return std::move(out.merged);
  }

 private:
  Qwen35Model& model_;
  KvDtype kv_dtype_;
  bool with_mtp_;
  std::unique_ptr<Workspace> workspace_;  // [max_batch_tokens, ·] activations
  std::vector<float> hidden_;             // [max_batch_tokens, H] the last forward's hidden rows (with_mtp_ only)
  int64_t hidden_count_ = 0;              // rows of hidden_ the last forward wrote
  const VisionModel* vision_ = nullptr;
};

}  // namespace ds
