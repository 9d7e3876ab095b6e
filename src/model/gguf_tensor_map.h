// The qwen35 GGUF tensor map: every HF tensor of the text model, the name llama.cpp's converter
// (convert_hf_to_gguf.py, conversion/qwen.py) gives it, and what it does to the values. One table
// serves both directions — GgufCheckpoint reads a GGUF back into HF tensors, the GGUF writer
// (gguf_export.h) converts HF tensors into a GGUF — so the two cannot drift apart.
//
// Conversions (docs/gguf.md has the table):
//   centred_norm   zero-centred RMSNorm weights are stored 1 + w, in F32
//   ssm_a          A_log is stored −exp(A_log), in F32, value heads tiled
//   head_rows      value heads tiled along the rows (in_proj_z, in_proj_a/b, dt_bias)
//   qkv_rows       the V rows of in_proj_qkv tiled (after the q and k rows)
//   conv           conv1d [C, 1, K] squeezed to [C, K], its V channels tiled like qkv_rows
//   head_columns   value heads tiled along the columns (out_proj)
// The MTP head (mtp.*): its layer j is the nextn block blk.<layers + j> under the text layers' names
// and conversions (mtp.layers.0.input_layernorm.weight → blk.<layers>.attn_norm.weight, 1 + w); fc,
// the two pre-fc norms and mtp.norm are blk.<layers>.nextn.{eh_proj, enorm, hnorm, shared_head_norm}
// (the norms 1 + w). embed_tokens and lm_head are the model's (llama.cpp's optional
// nextn.embed_tokens / nextn.shared_head_head have no HF tensor: a Qwen3.5 file never has them).
// Tiling: when there are more value heads than key heads (nV = r·nK), llama.cpp stores them in tiled
// order: GGUF head j·nK + g holds HF head g·r + j. Shapes: GGUF's are ggml order (innermost first),
// the reverse of HF's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "io/model_config.h"
#include "util/status.h"

namespace ds {

enum class GgufConversion { none, centred_norm, ssm_a, head_rows, qkv_rows, head_columns, conv };

// One tensor of the map, under both names. `hf` uses `hf_text_prefix` ("model." for the text-only
// layout GGUF models read back as; lm_head.weight has none).
struct GgufTensorName {
  std::string gguf;
  std::string hf;
  GgufConversion conversion = GgufConversion::none;
  int64_t layer = -1;  // blk.N, or −1 for token_embd / output_norm / output
  bool mtp = false;    // blk.N for N ≥ the model's layers: llama.cpp's nextn blocks, the MTP head
};

// GGUF → HF: the tensor named `gguf_name` of a model with `layers` text layers (blocks ≥ `layers`
// are the MTP head's), or nullopt for a name qwen35 has no use for.
std::optional<GgufTensorName> gguf_to_hf_name(std::string_view gguf_name, int64_t layers,
                                              std::string_view hf_text_prefix = "model.");
// HF → GGUF: the tensor named `hf_name` (text model under `hf_text_prefix`, or the MTP head mtp.*
// of a model with `layers` text layers), or nullopt for a name a qwen35 GGUF does not store (vision).
std::optional<GgufTensorName> hf_to_gguf_name(std::string_view hf_name, std::string_view hf_text_prefix, int64_t layers);

// Where a tiled tensor's value heads are: rows [first_row, first_row + nV · rows_per_head).
struct ValueHeadRows {
  int64_t first_row = 0;
  int64_t rows_per_head = 0;
};
// For the row conversions (ssm_a, head_rows, qkv_rows, conv) of a tensor of `rows` rows (1-D
// tensors: one value per row); an error (naming `name`) if the rows do not hold nV value heads.
Result<ValueHeadRows> value_head_rows(GgufConversion conversion, const TextConfig& config, int64_t rows,
                                      std::string_view name);

// Head positions under tiling (nV value heads, nK key heads; the identity when nV == nK).
inline int64_t gguf_head_of(int64_t hf_head, int64_t key_heads, int64_t value_heads) {
  const int64_t per_key = value_heads / key_heads;
  return (hf_head % per_key) * key_heads + hf_head / per_key;
}
inline int64_t hf_head_of(int64_t gguf_head, int64_t key_heads, int64_t value_heads) {
  const int64_t per_key = value_heads / key_heads;
  return (gguf_head % key_heads) * per_key + gguf_head / key_heads;
}

}  // namespace ds
