// Workspace: every activation buffer of a forward call, sized once for the largest batch
// (max_tokens rows), so no forward allocates. Shapes in rows × columns, fp32.
#pragma once

#include <cstdint>
#include <vector>

#include "io/model_config.h"

namespace ds {

struct Workspace {
  // mtp: also the buffers of the MTP head's forward (Qwen35Model::mtp_forward).
  Workspace(const TextConfig& c, int64_t max_tokens, bool mtp = false);
  int64_t max_tokens;
  std::vector<float> hidden;     // [T, H] residual stream
  std::vector<float> normed;     // [T, H]
  std::vector<float> mixer_out;  // [T, H]
  std::vector<float> rope_cos;   // [T, rotary/2]
  std::vector<float> rope_sin;   // [T, rotary/2]
  std::vector<int32_t> tokens;   // [T]
  std::vector<int32_t> positions;  // [T, 3]
  // gated attention
  std::vector<float> query_gate;  // [T, nH·2·D] q_proj output
  std::vector<float> query;       // [T, nH, D]
  std::vector<float> gate;        // [T, nH·D]
  std::vector<float> key;         // [T, nKV, D]
  std::vector<float> value;       // [T, nKV, D]
  std::vector<float> attn;        // [T, nH·D]
  // Gated DeltaNet
  std::vector<float> mixed_qkv;  // [T, Cv] in_proj_qkv output
  std::vector<float> conv_out;   // [T, Cv] after conv + SiLU: q | k | v
  std::vector<float> z;          // [T, nV·dV]
  std::vector<float> a;          // [T, nV]
  std::vector<float> b;          // [T, nV]
  std::vector<float> g;          // [T, nV]
  std::vector<float> beta;       // [T, nV]
  std::vector<float> core;       // [T, nV·dV]
  std::vector<float> core_normed;  // [T, nV·dV]
  // MLP
  std::vector<float> mlp_gate;  // [T, I]
  std::vector<float> mlp_up;    // [T, I]
  std::vector<float> mlp_act;   // [T, I]
  // head
  std::vector<float> head_in;   // [T, H] rows that need logits, normed
  // MTP head (empty unless made with mtp)
  std::vector<float> mtp_pair;  // [T, 2H] per row: normed embedding | normed hidden (fc's input)
};

}  // namespace ds
