// Qwen35Weights: views of every text-model tensor, bound from a checkpoint by the weight table
// (see weight_spec.h) with shape and dtype checks; mirrors HF's module tree of Qwen3_5TextModel.
#pragma once

#include <optional>
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
  // out_proj's columns in runs of dV: run i multiplies HF value head out_proj_column_heads[i]. Empty:
  // HF's order. Set where a checkpoint keeps its file's order (Checkpoint::column_heads).
  std::vector<int32_t> out_proj_column_heads;
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

// The multi-token-prediction head (vLLM Qwen3_5MultiTokenPredictor; ../shared/docs/qwen35-mtp.md §1.1):
// pre-fc norms over the next token's embedding and the main model's post-norm hidden, fc over their
// concatenation (embedding first), full-attention decoder layers, a final norm; the embedding table
// and the head are the main model's.
struct MtpWeights {
  TensorView pre_fc_norm_embedding;  // [H] zero-centred
  TensorView pre_fc_norm_hidden;     // [H] zero-centred
  TensorView fc;                     // [H, 2H] columns: normed embedding | normed hidden
  std::vector<DecoderLayerWeights> layers;  // mtp_num_hidden_layers, each full_attention
  TensorView norm;                   // [H] zero-centred, before the shared head
};

struct Qwen35Weights {
  TensorView embed_tokens;      // [V, H]
  TensorView norm;              // [H] final norm, zero-centred
  TensorView lm_head;           // [V, H]; the embedding when tied
  bool tied = false;
  std::vector<DecoderLayerWeights> layers;
  // Bound when the checkpoint holds the HF-layout MTP head (mtp.*); empty otherwise (MTP unavailable).
  std::optional<MtpWeights> mtp;
};

// Every matmul weight of the text model (layer projections in forward order, then the head): what a
// decode step streams.
std::vector<TensorView*> matmul_weights(Qwen35Weights& weights);

// The MTP head's own matmul weights (fc, then its layers' projections; the head is shared): empty
// without a bound head.
std::vector<TensorView*> mtp_matmul_weights(Qwen35Weights& weights);

// What load-time repacking (bf16 panels, int8, Q4_K) rewrites: matmul_weights, then mtp_matmul_weights.
std::vector<TensorView*> packed_matmul_weights(Qwen35Weights& weights);

// Every view of the text model and the MTP head (matmul weights, norms, conv, gates, embedding; a
// layer's fields of the other kind are empty): what they read.
std::vector<const TensorView*> text_views(const Qwen35Weights& weights);

// What binding did besides binding: the layout found and the tensors left out on purpose.
struct BindReport {
  std::string text_prefix;                  // "model.language_model." or "model."
  std::vector<std::string> skipped_vision;  // model.visual.* (vision tower: not supported yet)
  std::vector<std::string> ignored;         // e.g. lm_head.weight of a tied checkpoint
};

// Binds every text tensor, and the MTP head when the checkpoint holds any HF-layout mtp.* tensor (then
// all of it, checked as strictly as the rest); a missing tensor, a wrong shape or dtype, or a tensor
// no part claims is an error naming it. Vision tensors and a GGUF's nextn layers are listed in the
// report and skipped.
Result<Qwen35Weights> bind_qwen35_weights(Checkpoint& checkpoint, const ModelConfig& config,
                                          BindReport* report);

}  // namespace ds
