// File types → tensor types (llama.cpp: conversion/base.py prepare_tensors; src/llama-quant.cpp
// tensor_allows_quantization, llama_tensor_get_type_impl, tensor_type_fallback), and row encoding.
#include "model/gguf_file_type.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>

#include "kernels/formats/q4_k/q4_k.h"
#include "kernels/formats/q5_k/q5_k.h"
#include "kernels/formats/q6_k/q6_k.h"
#include "util/check.h"
#include "util/float16.h"

namespace ds {
namespace {

GgmlTypeInfo type(uint32_t id) { return *ggml_type_info(id); }

struct FileTypeInfo {
  GgufFileType type;
  const char* name;
  uint32_t llama_ftype;  // enum llama_ftype
  uint32_t base;         // ggml type of the tensors the mix does not single out
};

constexpr FileTypeInfo kFileTypes[] = {
    {GgufFileType::f32, "F32", 0, kGgmlF32},          {GgufFileType::f16, "F16", 1, kGgmlF16},
    {GgufFileType::bf16, "BF16", 32, kGgmlBF16},      {GgufFileType::q8_0, "Q8_0", 7, kGgmlQ8_0},
    {GgufFileType::q6_k, "Q6_K", 18, kGgmlQ6_K},      {GgufFileType::q5_k_m, "Q5_K_M", 17, kGgmlQ5_K},
    {GgufFileType::q4_k_m, "Q4_K_M", 15, kGgmlQ4_K},
};

const FileTypeInfo& info(GgufFileType type) {
  for (const FileTypeInfo& i : kFileTypes)
    if (i.type == type) return i;
  DS_CHECK(false, "unknown GgufFileType");
  return kFileTypes[0];
}

bool ends_with(std::string_view s, std::string_view suffix) { return s.size() >= suffix.size() && s.ends_with(suffix); }

// llama-quant.cpp's use_more_bits: the first and last eighth of the layers, and every third between.
bool use_more_bits(int64_t layer, int64_t layers) {
  return layer < layers / 8 || layer >= 7 * layers / 8 || (layer - layers / 8) % 3 == 2;
}

// The mix's choice for a quantised tensor (llama_tensor_get_type_impl, dense models).
uint32_t mix_type(GgufFileType file, const GgufTensorName& t, int64_t layers, bool tied) {
  const std::string_view name = t.gguf;
  const bool output = name == "output.weight" || (tied && name == "token_embd.weight");
  if (output) return file == GgufFileType::q8_0 ? kGgmlQ8_0 : kGgmlQ6_K;
  const bool more_bits_mix = file == GgufFileType::q4_k_m || file == GgufFileType::q5_k_m;
  // attn_v and attn_qkv share one counter in llama.cpp (category_is_attn_v), which counts them in
  // name order within each layer: one per layer in qwen35, so the counter is the layer.
  const bool attn_v = ends_with(name, "attn_v.weight") || ends_with(name, "attn_qkv.weight");
  if (more_bits_mix && (attn_v || ends_with(name, "ffn_down.weight")) && use_more_bits(t.layer, layers)) return kGgmlQ6_K;
  return info(file).base;
}

}  // namespace

Result<GgufFileType> parse_gguf_file_type(std::string_view name) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  for (const FileTypeInfo& i : kFileTypes)
    if (upper == i.name) return i.type;
  return Status::errorf("GGUF file type \"", name, "\": expected one of ", kGgufFileTypeNames);
}

const char* gguf_file_type_name(GgufFileType type) { return info(type).name; }
uint32_t llama_ftype_of(GgufFileType type) { return info(type).llama_ftype; }

GgmlTypeInfo gguf_tensor_type(GgufFileType file, const GgufTensorName& t, std::span<const int64_t> shape, int64_t layers,
                              bool tied) {
  const std::string_view name = t.gguf;
  const bool dense = shape.size() >= 2 && ends_with(name, ".weight") && !ends_with(name, "_norm.weight") &&
                     name.find("ssm_conv1d") == std::string_view::npos;
  if (!dense) return type(kGgmlF32);
  uint32_t id = info(file).base;
  const bool k_mix = file == GgufFileType::q6_k || file == GgufFileType::q5_k_m || file == GgufFileType::q4_k_m;
  if (k_mix) id = mix_type(file, t, layers, tied);
  const GgmlTypeInfo chosen = type(id);
  if (shape[0] % chosen.block_size == 0) return chosen;
  if (shape[0] % type(kGgmlQ8_0).block_size == 0 && id != kGgmlQ8_0) return type(kGgmlQ8_0);
  return type(kGgmlF16);
}

void encode_gguf_row(const GgmlTypeInfo& t, const float* x, int64_t n, std::byte* out) {
  DS_CHECK(n % t.block_size == 0, t.name, " row of ", n, " values is not whole blocks");
  switch (t.id) {
    case kGgmlF32:
      std::memcpy(out, x, static_cast<size_t>(n) * 4);
      return;
    case kGgmlF16: case kGgmlBF16:
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t half = t.id == kGgmlF16 ? float_to_fp16(x[i]) : float_to_bf16(x[i]);
        std::memcpy(out + 2 * i, &half, 2);
      }
      return;
    case kGgmlQ8_0:
      // gguf-py's __quantize_blocks (= ggml's quantize_row_q8_0_ref), in fp32.
      for (int64_t b = 0; b < n / 32; ++b) {
        const float* v = x + 32 * b;
        std::byte* block = out + 34 * b;
        float amax = 0.0f;
        for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(v[i]));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        const uint16_t d16 = float_to_fp16(d);
        std::memcpy(block, &d16, 2);
        for (int i = 0; i < 32; ++i) block[2 + i] = static_cast<std::byte>(static_cast<int8_t>(std::round(v[i] * id)));
      }
      return;
    case kGgmlQ4_K: case kGgmlQ5_K: case kGgmlQ6_K: {
      const KquantType& k = t.id == kGgmlQ4_K ? q4_k_type() : t.id == kGgmlQ5_K ? q5_k_type() : q6_k_type();
      for (int64_t b = 0; b < n / kSuperblock; ++b) k.quantize(x + kSuperblock * b, out + k.block_bytes() * b);
      return;
    }
    default:
      DS_CHECK(false, "encode_gguf_row: ggml type ", t.name, " has no encoder");
  }
}

}  // namespace ds
