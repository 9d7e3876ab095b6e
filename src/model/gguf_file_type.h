// GGUF file types, as llama.cpp users name them (convert_hf_to_gguf.py --outtype, llama-quantize):
// which ggml type each tensor of a qwen35 model gets in a file of that type, and how a row of values
// is encoded in that ggml type.
//
// The per-tensor choice is llama.cpp's (docs/gguf.md):
//   - always F32: 1-D tensors, *_norm.weight, ssm_conv1d, names that do not end in .weight (ssm_a,
//     ssm_dt.bias) — the converter's rule, which llama-quantize keeps;
//   - F32, F16, BF16, Q8_0: every other tensor in that type (the converter's --outtype);
//   - Q6_K, Q5_K_M, Q4_K_M (llama-quantize's mixes, llama_tensor_get_type): the base type Q6_K /
//     Q5_K / Q4_K; output.weight (or token_embd when tied) Q6_K; for Q4_K_M and Q5_K_M, attn_v and
//     attn_qkv (ranked together, one per layer) and ffn_down Q6_K in the layers use_more_bits picks
//     (the first and last eighth, and every third between);
//   - a row that is not whole blocks: llama.cpp falls back to Q5_0 / Q5_1 / Q8_0 for Q4_K / Q5_K /
//     Q6_K; here every K-quant falls back to Q8_0 (deltaserve reads no Q5_0 / Q5_1), and Q8_0 to
//     F16 when the row is not whole blocks of 32. No real Qwen3.5 shape needs a fallback.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "io/ggml_types.h"
#include "model/gguf_tensor_map.h"
#include "util/status.h"

namespace ds {

enum class GgufFileType { f32, f16, bf16, q8_0, q6_k, q5_k_m, q4_k_m };

// Accepts the names case-insensitively: F32, F16, BF16, Q8_0, Q6_K, Q5_K_M, Q4_K_M.
Result<GgufFileType> parse_gguf_file_type(std::string_view name);
const char* gguf_file_type_name(GgufFileType type);
inline constexpr const char* kGgufFileTypeNames = "F32, F16, BF16, Q8_0, Q6_K, Q5_K_M, Q4_K_M";
// general.file_type: llama.cpp's enum llama_ftype.
uint32_t llama_ftype_of(GgufFileType type);

// The ggml type of `tensor` (shape in ggml order) in a file of `type`, for a model of `layers`
// blocks (block_count: the text layers and any nextn layers); `tied`: the model has no output.weight.
GgmlTypeInfo gguf_tensor_type(GgufFileType type, const GgufTensorName& tensor, std::span<const int64_t> shape,
                              int64_t layers, bool tied);

// out = one row of `n` values encoded in `type` (F32, F16, BF16, Q8_0, Q4_K, Q5_K, Q6_K; n whole
// blocks of it): F16 and BF16 round to nearest even, Q8_0 as llama.cpp and gguf-py quantise it
// (d = max |x| / 127 as fp16, q = round(x / d) half away from zero), the K-quants by deltaserve's own
// quantisers (kernels/formats/q4_k/ …: least-squares grids, no importance matrix).
void encode_gguf_row(const GgmlTypeInfo& type, const float* values, int64_t n, std::byte* out);

}  // namespace ds
