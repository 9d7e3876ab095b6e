// Rolling a sequence's Gated DeltaNet state back to a prefix of a recorded decode call: from the
// state before the call, the conv and the recurrent delta rule over the recorded rows (the §2.5 scheme
// of ../shared/docs/qwen35-mtp.md: no per-position state copies, a replay of a + 1 rank-1 updates).
#include "model/deltanet_record.h"
#include "model/qwen35_model.h"

namespace ds {

Status Qwen35Model::replay_deltanet(const DeltaNetRecord& record, int64_t rows, DeltaNetStateSlots& states, int32_t slot,
                                    Workspace& ws) {
  if (rows < 0 || rows > record.rows)
    return Status::errorf("DeltaNet replay of ", rows, " rows; the recorded call ran ", record.rows);
  if (record.conv_dim != config_.conv_dim() || record.v_heads != config_.linear_num_value_heads)
    return Status::errorf("the DeltaNet record was reserved for another model shape");
  if (rows > ws.max_tokens) return Status::errorf("DeltaNet replay of ", rows, " rows exceeds the workspace capacity of ", ws.max_tokens);
  if (rows == 0) return {};
  const int64_t Cv = config_.conv_dim(), key_dim = config_.key_dim();
  const DeltaNetShape shape{config_.linear_num_key_heads, config_.linear_num_value_heads, config_.linear_key_head_dim,
                            config_.linear_value_head_dim};
  for (size_t l = 0; l < weights_.layers.size(); ++l) {
    const DecoderLayerWeights& layer = weights_.layers[l];
    if (layer.type != LayerType::linear_attention) continue;
    const int64_t state_layer = cache_index_[l];
    float* conv_out = ws.conv_out.data();  // [rows, Cv] q | k | v after the conv and SiLU
    float* conv_state = states.conv(slot, state_layer);
    float* state = states.recurrent(slot, state_layer);
    backend_.causal_conv1d_silu(record.mixed_of(state_layer), rows, Cv, conv_taps_[state_layer].data(),
                                config_.linear_conv_kernel_dim, conv_state, conv_state, conv_out);
    backend_.gated_delta_rule_recurrent(conv_out, conv_out + key_dim, conv_out + 2 * key_dim, Cv, record.g_of(state_layer),
                                        record.beta_of(state_layer), rows, shape, state, state,
                                        ws.core.data());  // [rows, nV·dV], not needed
  }
  return {};
}

}  // namespace ds
