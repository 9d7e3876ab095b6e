// Qwen35Weights: views of every text-model tensor, bound from a checkpoint by the weight table
// (see weight_spec.h) with shape and dtype checks; mirrors HF's module tree of Qwen3_5TextModel.
#pragma once

#include <string>
#include <vector>

#include "io/model_config.h"
#include "io/checkpoint.h"
#include "io/tensor_view.h"
#include "util/status.h"

namespace ds {

struct FullAttentionWeights {   // Qwen3_5Attention
  TensorView q_proj;            // [nH·2·D, H]  query | gate per head
  TensorView k_proj;            // [nKV·D, H]
  TensorView v_proj;            // [nKV·D, H]
  TensorView o_proj;            // [H, nH·D]
  TensorView q_norm;            // [D] zero-centred
  TensorView k_norm;            // [D] zero-centred
};

struct GatedDeltaNetWeights {   // Qwen3_5GatedDeltaNet
  TensorView in_proj_qkv;       // [Cv, H]  rows Q | K | V
  TensorView in_proj_z;         // [nV·dV, H]
  TensorView in_proj_b;         // [nV, H]
  TensorView in_proj_a;         // [nV, H]
  TensorView conv1d;            // [Cv, 1, K]
  TensorView A_log;             // [nV] (fp32 in Qwen3.5 files)
  TensorView dt_bias;           // [nV]
  TensorView norm;              // [dV] plain weight (fp32 in Qwen3.5 files)
  TensorView out_proj;          // [H, nV·dV]
};

struct MlpWeights {             // Qwen3_5MLP (SwiGLU)
  TensorView gate_proj;         // [I, H]
  TensorView up_proj;           // [I, H]
  TensorView down_proj;         // [H, I]
};

struct DecoderLayerWeights {    // Qwen3_5DecoderLayer
  LayerType type = LayerType::linear_attention;
  TensorView input_layernorm;           // [H] zero-centred
  TensorView post_attention_layernorm;  // [H] zero-centred
  FullAttentionWeights attention;       // set when type == full_attention
  GatedDeltaNetWeights deltanet;        // set when type == linear_attention
  MlpWeights mlp;
};

struct Qwen35Weights {
  TensorView embed_tokens;      // [V, H]
  TensorView norm;              // [H] final norm, zero-centred
  TensorView lm_head;           // [V, H]; the embedding when tied
  bool tied = false;
  std::vector<DecoderLayerWeights> layers;
};

// Every matmul weight of the text model (layer projections in forward order, then the head): what
// load-time repacking (bf16 panels, int8) rewrites.
std::vector<TensorView*> matmul_weights(Qwen35Weights& weights);

// What binding did besides binding: the layout found and the tensors left out on purpose.
struct BindReport {
  std::string text_prefix;                  // "model.language_model." or "model."
  std::vector<std::string> skipped_vision;  // model.visual.* (vision tower: not supported yet)
  std::vector<std::string> skipped_mtp;     // mtp.* (MTP head: not supported yet)
  std::vector<std::string> ignored;         // e.g. lm_head.weight of a tied checkpoint
};

// Binds every text tensor; a missing tensor, a wrong shape or dtype, or a tensor no part claims is
// an error naming it. Vision and MTP tensors are listed in the report and skipped.
Result<Qwen35Weights> bind_qwen35_weights(Checkpoint& checkpoint, const ModelConfig& config,
                                          BindReport* report);

}  // namespace ds
