// Gated GQA attention layer (HF Qwen3_5Attention; spec §3.3): q_proj gives query | gate per head;
// q_norm / k_norm (zero-centred) per head; partial RoPE; K/V appended to the paged cache (fp32, or
// bf16 in fast mode); causal softmax attention; output ⊙ sigmoid(gate); o_proj. A forward's last layer
// may ask for its output rows only (Qwen35Model::decoder_layer): every row's K and V, the rest for those.
#include <cmath>
#include <cstring>

#include "model/qwen35_model.h"
#include "util/check.h"

namespace ds {

void Qwen35Model::attention_layer(const DecoderLayerWeights& layer, int64_t kv_layer, const ForwardBatch& batch,
                                  KvBlockPool& kv, Workspace& ws, bool outputs_only) {
  const FullAttentionWeights& w = layer.attention;
  const int64_t T = batch.total_tokens(), R = outputs_only ? batch.output_rows() : T, H = config_.hidden_size;
  const int64_t nH = config_.num_attention_heads, nKV = config_.num_key_value_heads, D = config_.head_dim;
  const float eps = static_cast<float>(config_.rms_norm_eps);

  if (!outputs_only) {
    matmuls(ws.normed.data(), T, {{&w.q_proj, ws.query_gate.data()},  // [T, nH, 2D]: per head query | gate
                                  {&w.k_proj, ws.key.data()},         // [T, nKV, D]
                                  {&w.v_proj, ws.value.data()}});     // [T, nKV, D]
  } else {
    matmuls(ws.normed.data(), T, {{&w.k_proj, ws.key.data()}, {&w.v_proj, ws.value.data()}});
    gather_output_rows(batch, ws.normed.data(), ws.mixer_out.data(), H);  // [R, H]; mixer_out is free until o_proj
    matmul(ws.mixer_out.data(), R, w.q_proj, ws.query_gate.data());        // [R, nH, 2D]
  }
  for (int64_t t = 0; t < R; ++t)
    for (int64_t h = 0; h < nH; ++h) {
      const float* src = ws.query_gate.data() + (t * nH + h) * 2 * D;
      std::memcpy(ws.query.data() + (t * nH + h) * D, src, sizeof(float) * D);
      std::memcpy(ws.gate.data() + (t * nH + h) * D, src + D, sizeof(float) * D);
    }
  backend_.rms_norm(ws.query.data(), R * nH, D, w.q_norm, eps, ws.query.data());
  backend_.rms_norm(ws.key.data(), T * nKV, D, w.k_norm, eps, ws.key.data());
  const RopeAngles angles{ws.rope_cos.data(), ws.rope_sin.data(), rope_.half_dim()};
  backend_.rope(ws.key.data(), T, nKV, D, angles);
  if (outputs_only) {  // the queries' angles: the output rows', compacted like them (nothing reads the others after this layer)
    gather_output_rows(batch, ws.rope_cos.data(), ws.rope_cos.data(), rope_.half_dim());
    gather_output_rows(batch, ws.rope_sin.data(), ws.rope_sin.data(), rope_.half_dim());
  }
  backend_.rope(ws.query.data(), R, nH, D, angles);

  const KvLayerView view = kv.layer(kv_layer);
  DS_CHECK(mode_ == ComputeMode::fast || view.dtype == KvDtype::fp32,
           "a model computing in f32 mode keeps its KV cache fp32, found a ", kv_dtype_name(view.dtype), " cache");
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  int64_t row = 0, out = 0;
  for (const SequenceInput& seq : batch.sequences) {
    const auto n = static_cast<int64_t>(seq.tokens.size());
    backend_.kv_write(ws.key.data() + row * nKV * D, ws.value.data() + row * nKV * D, n, seq.start_pos,
                      seq.block_table.data(), view);
    // Query rows first .. n − 1 sit at positions start_pos + first ..; every key up to the last is written.
    const int64_t first = outputs_only ? seq.first_output() : 0;
    if (n > first)
      backend_.attention(ws.query.data() + out * nH * D, n - first, seq.start_pos + first, nH, seq.block_table.data(), view,
                         scale, ws.attn.data() + out * nH * D);
    row += n;
    out += n - first;
  }
  backend_.sigmoid_gate(ws.attn.data(), ws.gate.data(), R * nH * D);
  matmul(ws.attn.data(), R, w.o_proj, ws.mixer_out.data());
}

}  // namespace ds
