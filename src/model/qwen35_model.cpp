// Qwen35Model forward: embed → [pre-norm token mixer (gated attention or Gated DeltaNet) + residual,
// pre-norm SwiGLU MLP + residual] × layers → final norm → head on the rows that want logits.
// HF Qwen3_5DecoderLayer / Qwen3_5TextModel; spec §5.
#include "model/qwen35_model.h"

#include <algorithm>
#include <cstring>

#include "kernels/weight_access.h"
#include "model/deltanet_record.h"

namespace ds {

Qwen35Model::Qwen35Model(const ModelConfig& config, Qwen35Weights weights, Backend& backend, ComputeMode mode)
    : config_(config.text),
      weights_(std::move(weights)),
      backend_(backend),
      mode_(effective_mode(mode, weights_)),
      rope_(config.text) {
  int64_t full = 0, linear = 0;
  for (LayerType type : config_.layer_types) cache_index_.push_back(type == LayerType::full_attention ? full++ : linear++);
  conv_taps_.resize(static_cast<size_t>(linear));
  for (size_t l = 0; l < weights_.layers.size(); ++l)
    if (weights_.layers[l].type == LayerType::linear_attention)
      conv_taps_[static_cast<size_t>(cache_index_[l])] = conv_taps(weights_.layers[l].deltanet.conv1d);
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

Status Qwen35Model::validate(const ForwardBatch& batch, const KvBlockPool& kv, const Workspace& ws, bool uses_kv) const {
  const int64_t total = batch.total_tokens();
  if (total > ws.max_tokens)
    return Status::errorf("batch of ", total, " tokens exceeds the workspace capacity of ", ws.max_tokens);
  for (size_t s = 0; s < batch.sequences.size(); ++s) {
    const SequenceInput& seq = batch.sequences[s];
    const auto n = static_cast<int64_t>(seq.tokens.size());
    if (n == 0) return Status::errorf("sequence ", s, " has no tokens");
    if (seq.record && (seq.record->max_rows < n || seq.record->conv_dim != config_.conv_dim()))
      return Status::errorf("sequence ", s, ": its DeltaNet record holds ", seq.record->max_rows, " rows of ",
                            seq.record->conv_dim, " channels, the call runs ", n, " of ", config_.conv_dim());
    for (int32_t id : seq.tokens)
      if (id < 0 || id >= config_.vocab_size)
        return Status::errorf("token id ", id, " is outside the vocabulary [0, ", config_.vocab_size, ")");
    const int64_t needed = (seq.start_pos + n + kv.block_size() - 1) / kv.block_size();
    if (uses_kv && static_cast<int64_t>(seq.block_table.size()) < needed)
      return Status::errorf("sequence ", s, " needs ", needed, " KV blocks for ", seq.start_pos + n, " positions, has ",
                            seq.block_table.size());
    for (int32_t block : seq.block_table)
      if (block < 0 || block >= kv.num_blocks()) return Status::errorf("KV block id ", block, " is out of range");
    if (!seq.positions.empty() && static_cast<int64_t>(seq.positions.size()) != 3 * n)
      return Status::errorf("sequence ", s, ": positions hold ", seq.positions.size(), " values, expected 3 × ", n);
    if (seq.embedding_rows.size() != seq.embedding_at.size() * static_cast<size_t>(config_.hidden_size))
      return Status::errorf("sequence ", s, ": embedding rows hold ", seq.embedding_rows.size(), " values, expected ",
                            seq.embedding_at.size(), " × ", config_.hidden_size);
    for (int32_t at : seq.embedding_at)
      if (at < 0 || at >= n) return Status::errorf("sequence ", s, ": embedding row at token ", at, " of ", n);
  }
  return {};
}

void Qwen35Model::embed(const ForwardBatch& batch, const Workspace& ws, float* out) {
  const int64_t H = config_.hidden_size;
  backend_.embedding(ws.tokens.data(), batch.total_tokens(), weights_.embed_tokens, out);  // [T, H]
  // Rows that stand in for token embeddings (the vision merger's, at image-pad tokens).
  int64_t row = 0;
  for (const SequenceInput& seq : batch.sequences) {
    for (size_t k = 0; k < seq.embedding_at.size(); ++k)
      std::copy_n(seq.embedding_rows.data() + k * static_cast<size_t>(H), H, out + (row + seq.embedding_at[k]) * H);
    row += static_cast<int64_t>(seq.tokens.size());
  }
}

void Qwen35Model::gather_tokens_and_positions(const ForwardBatch& batch, Workspace& ws) {
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
  rope_.angles(ws.positions.data(), row, ws.rope_cos.data(), ws.rope_sin.data());
}

void Qwen35Model::decoder_layer(const DecoderLayerWeights& layer, int64_t cache_layer, const ForwardBatch& batch,
                                KvBlockPool& kv, DeltaNetStateSlots* states, Workspace& ws, bool outputs_only) {
  const int64_t T = batch.total_tokens(), R = outputs_only ? batch.output_rows() : T, H = config_.hidden_size;
  const float eps = static_cast<float>(config_.rms_norm_eps);
  backend_.rms_norm(ws.hidden.data(), T, H, layer.input_layernorm, eps, ws.normed.data());
  if (layer.type == LayerType::full_attention) {
    attention_layer(layer, cache_layer, batch, kv, ws, outputs_only);  // mixer_out [R, H]
  } else {
    deltanet_layer(layer, cache_layer, batch, *states, ws);  // the recurrence needs every row
    if (outputs_only) gather_output_rows(batch, ws.mixer_out.data(), ws.mixer_out.data(), H);
  }
  if (outputs_only) gather_output_rows(batch, ws.hidden.data(), ws.hidden.data(), H);  // [R, H] from here on
  backend_.add(ws.hidden.data(), ws.mixer_out.data(), R * H);
  backend_.rms_norm(ws.hidden.data(), R, H, layer.post_attention_layernorm, eps, ws.normed.data());
  mlp(layer.mlp, R, ws);
  backend_.add(ws.hidden.data(), ws.mixer_out.data(), R * H);
}

Status Qwen35Model::forward(const ForwardBatch& batch, KvBlockPool& kv, DeltaNetStateSlots& states, Workspace& ws,
                            float* logits, float* hidden) {
  DS_TRY(validate(batch, kv, ws, num_attention_layers() > 0));
  if (batch.hidden_rows() > 0 && hidden == nullptr) return Status::error("the batch asks for hidden rows but gives no buffer");
  for (size_t s = 0; s < batch.sequences.size() && num_deltanet_layers() > 0; ++s) {
    const SequenceInput& seq = batch.sequences[s];
    for (int32_t slot : {seq.state_slot, seq.output_state_slot()})
      if (slot < 0 || slot >= states.num_slots())
        return Status::errorf("sequence ", s, ": DeltaNet state slot ", slot, " is outside [0, ", states.num_slots(), ")");
    if (seq.state_out_slot >= 0 && !seq.decodes())
      return Status::errorf("sequence ", s, ": a state written to another slot needs a decode call (the chunked "
                            "rule works in place), found a prefill of ", seq.tokens.size(), " tokens");
  }
  gather_tokens_and_positions(batch, ws);
  embed(batch, ws, ws.hidden.data());
  // Rows nobody reads past the last layer's cache writes (a prefill chunk's all but its last) skip
  // that layer's query, attention, o_proj and MLP (2B: 3.7% of a prompt token's layer matmuls).
  const bool outputs_only = batch.output_rows() < batch.total_tokens();
  for (size_t l = 0; l < weights_.layers.size(); ++l)
    decoder_layer(weights_.layers[l], cache_index_[l], batch, kv, &states, ws, outputs_only && l + 1 == weights_.layers.size());
  norm_and_head(batch, weights_.norm, weights_.lm_head, ws, logits, hidden, outputs_only && !weights_.layers.empty());
  return {};
}

void Qwen35Model::norm_and_head(const ForwardBatch& batch, const TensorView& final_norm, const TensorView& head,
                                Workspace& ws, float* logits, float* hidden, bool compacted) {
  const int64_t H = config_.hidden_size, out_rows = batch.output_rows();
  if (out_rows == 0) return;
  // Every row that wants logits or hidden, normed together (the norm works row by row): ws.normed [out_rows, H].
  if (!compacted) gather_output_rows(batch, ws.hidden.data(), ws.head_in.data(), H);
  backend_.rms_norm(compacted ? ws.hidden.data() : ws.head_in.data(), out_rows, H, final_norm,
                    static_cast<float>(config_.rms_norm_eps), ws.normed.data());
  // Hidden rows out, and the logits rows gathered into ws.head_in [logits_rows, H] for the head.
  int64_t normed_row = 0, hidden_rows = 0, logits_rows = 0;
  for (const SequenceInput& seq : batch.sequences) {
    const auto n = static_cast<int64_t>(seq.tokens.size());
    const int64_t first_logits = seq.first_row(seq.logits), first_hidden = seq.first_row(seq.hidden);
    for (int64_t i = seq.first_output(); i < n; ++i, ++normed_row) {
      const float* normed = ws.normed.data() + normed_row * H;
      if (i >= first_hidden) std::memcpy(hidden + (hidden_rows++) * H, normed, sizeof(float) * H);
      if (i >= first_logits) std::memcpy(ws.head_in.data() + (logits_rows++) * H, normed, sizeof(float) * H);
    }
  }
  if (logits_rows > 0) matmul(ws.head_in.data(), logits_rows, head, logits);
}

double Qwen35Model::mtp_step_weight_share() {
  if (!weights_.mtp) return 0;
  uint64_t decode_bytes = 0, head_bytes = (mtp_head_.empty() ? weights_.lm_head : mtp_head_).nbytes;
  for (const TensorView* w : matmul_weights(weights_)) decode_bytes += w->nbytes;  // lm_head included
  for (const TensorView* w : mtp_matmul_weights(weights_)) head_bytes += w->nbytes;
  return decode_bytes > 0 ? static_cast<double>(head_bytes) / static_cast<double>(decode_bytes) : 0;
}

void Qwen35Model::mlp(const MlpWeights& w, int64_t T, Workspace& ws) {
  matmuls(ws.normed.data(), T, {{&w.gate_proj, ws.mlp_gate.data()}, {&w.up_proj, ws.mlp_up.data()}});
  backend_.silu_mul(ws.mlp_gate.data(), ws.mlp_up.data(), T * config_.intermediate_size, ws.mlp_act.data());
  matmul(ws.mlp_act.data(), T, w.down_proj, ws.mixer_out.data());
}

}  // namespace ds
