// Gated DeltaNet layer (HF Qwen3_5GatedDeltaNet; spec §4): projections; causal conv + SiLU with
// the cached conv inputs; gates; chunked delta rule for multi-token calls and the recurrent form
// for single-token decode, both continuing the cached fp32 state; gated RMSNorm; out_proj.
#include "model/qwen35_model.h"

#include "model/deltanet_record.h"

namespace ds {

void Qwen35Model::deltanet_layer(const DecoderLayerWeights& layer, int64_t state_layer, const ForwardBatch& batch,
                                 DeltaNetStateSlots& states, Workspace& ws) {
  const GatedDeltaNetWeights& w = layer.deltanet;
  const int64_t T = batch.total_tokens(), Cv = config_.conv_dim(), key_dim = config_.key_dim();
  const int64_t K = config_.linear_conv_kernel_dim;
  const int64_t nV = config_.linear_num_value_heads, dV = config_.linear_value_head_dim;
  const DeltaNetShape shape{config_.linear_num_key_heads, nV, config_.linear_key_head_dim, dV};

  matmuls(ws.normed.data(), T, {{&w.in_proj_qkv, ws.mixed_qkv.data()},  // [T, Cv] channels Q | K | V
                                {&w.in_proj_z, ws.z.data()},          // [T, nV·dV]
                                {&w.in_proj_b, ws.b.data()},          // [T, nV]
                                {&w.in_proj_a, ws.a.data()}});        // [T, nV]
  backend_.deltanet_gates(ws.a.data(), ws.b.data(), T, nV, w.A_log, w.dt_bias, ws.g.data(), ws.beta.data());

  int64_t row = 0;
  for (const SequenceInput& seq : batch.sequences) {
    const auto n = static_cast<int64_t>(seq.tokens.size());
    if (seq.record) {  // the rows' inputs, for a rollback to a prefix of them (replay_deltanet)
      seq.record->rows = n;
      backend_.copy(seq.record->mixed_of(state_layer), ws.mixed_qkv.data() + row * Cv, static_cast<uint64_t>(n * Cv) * 4);
      backend_.copy(seq.record->g_of(state_layer), ws.g.data() + row * nV, static_cast<uint64_t>(n * nV) * 4);
      backend_.copy(seq.record->beta_of(state_layer), ws.beta.data() + row * nV, static_cast<uint64_t>(n * nV) * 4);
    }
    float* conv_out = ws.conv_out.data() + row * Cv;
    const int32_t in = seq.state_slot, out = seq.output_state_slot();  // differ only for decodes (validated)
    backend_.causal_conv1d_silu(ws.mixed_qkv.data() + row * Cv, n, Cv, conv_taps_[state_layer].data(), K,
                                states.conv(in, state_layer), states.conv(out, state_layer), conv_out);
    // HF takes the recurrent kernel only for a single token on an existing cache; every other
    // call (prefill, chunked-prefill continuation) takes the chunked kernel with the cached state.
    const float *q = conv_out, *k = conv_out + key_dim, *v = conv_out + 2 * key_dim;
    const float *g = ws.g.data() + row * nV, *beta = ws.beta.data() + row * nV;
    if (seq.decodes())
      backend_.gated_delta_rule_recurrent(q, k, v, Cv, g, beta, n, shape, states.recurrent(in, state_layer),
                                          states.recurrent(out, state_layer), ws.core.data() + row * nV * dV);
    else
      backend_.gated_delta_rule_chunked(q, k, v, Cv, g, beta, n, shape, states.recurrent(in, state_layer),
                                        ws.core.data() + row * nV * dV);
    row += n;
  }
  backend_.rms_norm_gated(ws.core.data(), ws.z.data(), T * nV, dV, w.norm, static_cast<float>(config_.rms_norm_eps),
                          ws.core_normed.data());
  const float* mixed = ws.core_normed.data();  // [T, nV·dV]
  if (!w.out_proj_column_heads.empty()) {    // out_proj's columns in another head order: the input follows
    for (int64_t t = 0; t < T; ++t)
      for (int64_t i = 0; i < nV; ++i)
        backend_.copy(ws.core.data() + (t * nV + i) * dV, mixed + (t * nV + w.out_proj_column_heads[i]) * dV,
                      static_cast<uint64_t>(dV) * 4);
    mixed = ws.core.data();
  }
  matmul(mixed, T, w.out_proj, ws.mixer_out.data());
}

}  // namespace ds
