// Qwen35StepModel: the Qwen3.5 model and its activation workspace as the engine's StepModel.
#pragma once

#include <memory>

#include "engine/step_model.h"
#include "model/kv_cache_dtype.h"
#include "model/qwen35_model.h"

namespace ds {

class Qwen35StepModel : public StepModel {
 public:
  // KV blocks of `kv_dtype` (--kv-cache-dtype); without one, the dtype that follows the model's mode.
  Qwen35StepModel(Qwen35Model& model, KvDtype kv_dtype) : model_(model), kv_dtype_(kv_dtype) {}
  explicit Qwen35StepModel(Qwen35Model& model) : Qwen35StepModel(model, default_kv_dtype(model)) {}
  int64_t vocab_size() const override { return model_.config().vocab_size; }
  CacheGeometry cache_geometry() const override { return CacheGeometry::of(model_.config(), kv_dtype_); }
  int64_t max_position_embeddings() const override { return model_.config().max_position_embeddings; }
  Backend& backend() override { return model_.backend(); }
  void reserve(int64_t max_batch_tokens) override {
    workspace_ = std::make_unique<Workspace>(model_.config(), max_batch_tokens);
  }
  Status forward(const ForwardBatch& batch, HybridCache& cache, float* logits) override {
    return model_.forward(batch, cache.kv(), cache.states(), *workspace_, logits);
  }

 private:
  Qwen35Model& model_;
  KvDtype kv_dtype_;
  std::unique_ptr<Workspace> workspace_;  // [max_batch_tokens, ·] activations
};

}  // namespace ds
