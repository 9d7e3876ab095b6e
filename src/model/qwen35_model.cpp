// Qwen35Model forward: embed → [pre-norm token mixer (gated attention or Gated DeltaNet) + residual,
// pre-norm SwiGLU MLP + residual] × layers → final norm → head on the rows that want logits.
// HF Qwen3_5DecoderLayer / Qwen3_5TextModel; spec §5.
#include "model/qwen35_model.h"

#include <algorithm>
#include <cstring>

namespace ds {

Qwen35Model::Qwen35Model(const ModelConfig& config, Qwen35Weights weights, Backend& backend, ComputeMode mode)
    : config_(config.text),
      weights_(std::move(weights)),
      backend_(backend),
      mode_(effective_mode(mode, weights_)),
      rope_(config.text) {
  int64_t full = 0, linear = 0;
  for (LayerType type : config_.layer_types) cache_index_.push_back(type == LayerType::full_attention ? full++ : linear++);
}

ComputeMode Qwen35Model::effective_mode(ComputeMode requested, const Qwen35Weights& weights) {
  return weights.embed_tokens.dtype == DType::F32 ? ComputeMode::f32 : requested;
}

void Qwen35Model::matmul(const float* x, int64_t rows, const TensorView& w, float* y) {
  backend_.matmul(x, rows, w, y, mode_ == ComputeMode::fast);
}

void Qwen35Model::matmuls(const float* x, int64_t rows, std::initializer_list<Backend::MatmulOutput> outputs) {
  backend_.matmuls(x, rows, std::span(outputs.begin(), outputs.size()), mode_ == ComputeMode::fast);
}

Status Qwen35Model::validate(const ForwardBatch& batch, const KvBlockPool& kv, const Workspace& ws) const {
  const int64_t total = batch.total_tokens();
  if (total > ws.max_tokens)
    return Status::errorf("batch of ", total, " tokens exceeds the workspace capacity of ", ws.max_tokens);
  for (size_t s = 0; s < batch.sequences.size(); ++s) {
    const SequenceInput& seq = batch.sequences[s];
    const auto n = static_cast<int64_t>(seq.tokens.size());
    if (n == 0) return Status::errorf("sequence ", s, " has no tokens");
    if (seq.kind == StepKind::decode && n != 1)
      return Status::errorf("sequence ", s, " is a decode step of ", n, " tokens, expected exactly 1");
    for (int32_t id : seq.tokens)
      if (id < 0 || id >= config_.vocab_size)
        return Status::errorf("token id ", id, " is outside the vocabulary [0, ", config_.vocab_size, ")");
    const int64_t needed = (seq.start_pos + n + kv.block_size() - 1) / kv.block_size();
    if (num_attention_layers() > 0 && static_cast<int64_t>(seq.block_table.size()) < needed)
      return Status::errorf("sequence ", s, " needs ", needed, " KV blocks for ", seq.start_pos + n, " positions, has ",
                            seq.block_table.size());
    for (int32_t block : seq.block_table)
      if (block < 0 || block >= kv.num_blocks()) return Status::errorf("KV block id ", block, " is out of range");
    if (!seq.positions.empty() && static_cast<int64_t>(seq.positions.size()) != 3 * n)
      return Status::errorf("sequence ", s, ": positions hold ", seq.positions.size(), " values, expected 3 × ", n);
  }
  return {};
}

Status Qwen35Model::forward(const ForwardBatch& batch, KvBlockPool& kv, DeltaNetStateSlots& states, Workspace& ws,
                            float* logits) {
  DS_TRY(validate(batch, kv, ws));
  const int64_t T = batch.total_tokens(), H = config_.hidden_size;

  // Tokens and positions of all sequences, concatenated: row r of every [T, ·] buffer.
  int64_t row = 0;
  for (const SequenceInput& seq : batch.sequences) {
    for (size_t i = 0; i < seq.tokens.size(); ++i, ++row) {
      ws.tokens[row] = seq.tokens[i];
      for (int axis = 0; axis < 3; ++axis)
        ws.positions[row * 3 + axis] = seq.positions.empty() ? static_cast<int32_t>(seq.start_pos + static_cast<int64_t>(i))
                                                             : seq.positions[i * 3 + axis];
    }
  }
  backend_.embedding(ws.tokens.data(), T, weights_.embed_tokens, ws.hidden.data());
  rope_.angles(ws.positions.data(), T, ws.rope_cos.data(), ws.rope_sin.data());

  const float eps = static_cast<float>(config_.rms_norm_eps);
  for (size_t l = 0; l < weights_.layers.size(); ++l) {
    const DecoderLayerWeights& layer = weights_.layers[l];
    backend_.rms_norm(ws.hidden.data(), T, H, layer.input_layernorm, eps, ws.normed.data());
    if (layer.type == LayerType::full_attention) attention_layer(layer, cache_index_[l], batch, kv, ws);
    else deltanet_layer(layer, cache_index_[l], batch, states, ws);
    backend_.add(ws.hidden.data(), ws.mixer_out.data(), T * H);
    backend_.rms_norm(ws.hidden.data(), T, H, layer.post_attention_layernorm, eps, ws.normed.data());
    mlp(layer.mlp, T, ws);
    backend_.add(ws.hidden.data(), ws.mixer_out.data(), T * H);
  }

  // Final norm and head only on the rows that want logits.
  int64_t out_rows = 0;
  row = 0;
  for (const SequenceInput& seq : batch.sequences) {
    const auto n = static_cast<int64_t>(seq.tokens.size());
    const int64_t first = seq.logits == LogitsRows::all ? 0 : seq.logits == LogitsRows::last ? n - 1 : n;
    for (int64_t i = first; i < n; ++i, ++out_rows)
      std::memcpy(ws.head_in.data() + out_rows * H, ws.hidden.data() + (row + i) * H, sizeof(float) * H);
    row += n;
  }
  if (out_rows == 0) return {};
  backend_.rms_norm(ws.head_in.data(), out_rows, H, weights_.norm, eps, ws.normed.data());
  matmul(ws.normed.data(), out_rows, weights_.lm_head, logits);
  return {};
}

void Qwen35Model::mlp(const MlpWeights& w, int64_t T, Workspace& ws) {
  matmuls(ws.normed.data(), T, {{&w.gate_proj, ws.mlp_gate.data()}, {&w.up_proj, ws.mlp_up.data()}});
  backend_.silu_mul(ws.mlp_gate.data(), ws.mlp_up.data(), T * config_.intermediate_size, ws.mlp_act.data());
  matmul(ws.mlp_act.data(), T, w.down_proj, ws.mixer_out.data());
}

}  // namespace ds
