// DeltaNetRecord: what a sequence's Gated DeltaNet layers advanced their state on during one call —
// each row's pre-conv projection and gates, per layer — so that the state can be brought to the end
// of any prefix of those rows by replaying them from the state before the call (speculative decoding:
// roll back to the accepted drafts; ../shared/docs/qwen35-mtp.md §2.5, docs/mtp.md).
#pragma once

#include <cstdint>
#include <vector>

#include "io/model_config.h"

namespace ds {

struct DeltaNetRecord {
  // Room for calls of up to `max_rows` rows of every linear-attention layer of `c`.
  void reserve(const TextConfig& c, int64_t max_rows_) {
    max_rows = max_rows_;
    conv_dim = c.conv_dim();
    v_heads = c.linear_num_value_heads;
    const auto layers = static_cast<size_t>(c.num_layers_of(LayerType::linear_attention));
    mixed_qkv.resize(layers * static_cast<size_t>(max_rows * conv_dim));
    g.resize(layers * static_cast<size_t>(max_rows * v_heads));
    beta.resize(layers * static_cast<size_t>(max_rows * v_heads));
  }
  float* mixed_of(int64_t layer) { return mixed_qkv.data() + layer * max_rows * conv_dim; }
  float* g_of(int64_t layer) { return g.data() + layer * max_rows * v_heads; }
  float* beta_of(int64_t layer) { return beta.data() + layer * max_rows * v_heads; }
  const float* mixed_of(int64_t layer) const { return mixed_qkv.data() + layer * max_rows * conv_dim; }
  const float* g_of(int64_t layer) const { return g.data() + layer * max_rows * v_heads; }
  const float* beta_of(int64_t layer) const { return beta.data() + layer * max_rows * v_heads; }

  int64_t rows = 0;  // rows the last recorded call ran
  int64_t max_rows = 0, conv_dim = 0, v_heads = 0;
  std::vector<float> mixed_qkv;  // [linear layers, max_rows, Cv] in_proj_qkv output, before the conv
  std::vector<float> g;          // [linear layers, max_rows, nV] log-decay
  std::vector<float> beta;       // [linear layers, max_rows, nV]
};

}  // namespace ds
