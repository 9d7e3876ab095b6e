// Qwen35Model: the hybrid text model's forward (HF Qwen3_5TextModel + lm_head), written once
// against the Backend op interface. Stateless apart from the weights: every call gets the batch,
// the caches and a workspace.
#pragma once

#include <initializer_list>
#include <vector>

#include "cache/deltanet_state_slots.h"
#include "cache/kv_block_pool.h"
#include "io/model_config.h"
#include "kernels/backend.h"
#include "model/forward_batch.h"
#include "model/qwen35_weights.h"
#include "model/rope_angles.h"
#include "model/workspace.h"
#include "util/status.h"

namespace ds {

// f32: activations fp32 everywhere (reference mode). fast: matmul inputs rounded to bf16 with fp32
// accumulation, as HF in bf16 and AVX-512 BF16 compute. fp32 checkpoints always compute in f32.
enum class ComputeMode { f32, fast };

class Qwen35Model {
 public:
  Qwen35Model(const ModelConfig& config, Qwen35Weights weights, Backend& backend, ComputeMode mode);
  // The mode a model computes in: fp32 checkpoints (fp32 embeddings) always compute in fp32.
  static ComputeMode effective_mode(ComputeMode requested, const Qwen35Weights& weights);

  const TextConfig& config() const { return config_; }
  Backend& backend() { return backend_; }
  ComputeMode mode() const { return mode_; }
  int64_t num_attention_layers() const { return config_.num_layers_of(LayerType::full_attention); }
  int64_t num_deltanet_layers() const { return config_.num_layers_of(LayerType::linear_attention); }

  // Runs the batch; writes logits [batch.logits_rows(), vocab] in batch order. Token ids, block
  // tables and sizes are checked (they come from requests): a bad batch is an error, not a crash.
  Status forward(const ForwardBatch& batch, KvBlockPool& kv, DeltaNetStateSlots& states, Workspace& ws, float* logits);

 private:
  Status validate(const ForwardBatch& batch, const KvBlockPool& kv, const Workspace& ws) const;
  void attention_layer(const DecoderLayerWeights& layer, int64_t kv_layer, const ForwardBatch& batch, KvBlockPool& kv,
                       Workspace& ws);
  void deltanet_layer(const DecoderLayerWeights& layer, int64_t state_layer, const ForwardBatch& batch,
                      DeltaNetStateSlots& states, Workspace& ws);
  void mlp(const MlpWeights& mlp, int64_t tokens, Workspace& ws);
  void matmul(const float* x, int64_t rows, const TensorView& w, float* y);
  // Projections that share their input, in one backend call (Backend::matmuls).
  void matmuls(const float* x, int64_t rows, std::initializer_list<Backend::MatmulOutput> outputs);

  TextConfig config_;
  Qwen35Weights weights_;
  Backend& backend_;
  ComputeMode mode_;
  RopeTable rope_;
  std::vector<int64_t> cache_index_;  // layer -> index among its kind (kv layer or state layer)
};

}  // namespace ds
