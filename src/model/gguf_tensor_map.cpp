// The qwen35 name table (names: gguf-py constants.py TENSOR_NAMES / tensor_mapping.py; conversions:
// conversion/qwen.py Qwen3NextModel.modify_tensors and _LinearAttentionVReorderBase; the MTP head:
// conversion/qwen.py _QwenMtpMixin.filter_tensors).
#include "model/gguf_tensor_map.h"

#include <algorithm>

#include "model/weight_spec.h"
#include "util/str_cat.h"

namespace ds {
namespace {

struct NameRule {
  const char* gguf;  // after "blk.N." (layer rules) or whole (model rules)
  const char* hf;    // after "<prefix>layers.N." (layer rules) or after the prefix (model rules)
  GgufConversion conversion;
};

constexpr NameRule kModelRules[] = {
    {"token_embd.weight", "embed_tokens.weight", GgufConversion::none},
    {"output_norm.weight", "norm.weight", GgufConversion::centred_norm},
};
constexpr const char* kHeadGguf = "output.weight";
constexpr const char* kHeadHf = "lm_head.weight";  // outside the text prefix

constexpr NameRule kLayerRules[] = {
    {"attn_norm.weight", "input_layernorm.weight", GgufConversion::centred_norm},
    {"post_attention_norm.weight", "post_attention_layernorm.weight", GgufConversion::centred_norm},
    {"ffn_gate.weight", "mlp.gate_proj.weight", GgufConversion::none},
    {"ffn_up.weight", "mlp.up_proj.weight", GgufConversion::none},
    {"ffn_down.weight", "mlp.down_proj.weight", GgufConversion::none},
    {"attn_q.weight", "self_attn.q_proj.weight", GgufConversion::none},
    {"attn_k.weight", "self_attn.k_proj.weight", GgufConversion::none},
    {"attn_v.weight", "self_attn.v_proj.weight", GgufConversion::none},
    {"attn_output.weight", "self_attn.o_proj.weight", GgufConversion::none},
    {"attn_q_norm.weight", "self_attn.q_norm.weight", GgufConversion::centred_norm},
    {"attn_k_norm.weight", "self_attn.k_norm.weight", GgufConversion::centred_norm},
    {"attn_qkv.weight", "linear_attn.in_proj_qkv.weight", GgufConversion::qkv_rows},
    {"attn_gate.weight", "linear_attn.in_proj_z.weight", GgufConversion::head_rows},
    {"ssm_beta.weight", "linear_attn.in_proj_b.weight", GgufConversion::head_rows},
    {"ssm_alpha.weight", "linear_attn.in_proj_a.weight", GgufConversion::head_rows},
    {"ssm_conv1d.weight", "linear_attn.conv1d.weight", GgufConversion::conv},
    {"ssm_dt.bias", "linear_attn.dt_bias", GgufConversion::head_rows},
    {"ssm_a", "linear_attn.A_log", GgufConversion::ssm_a},
    {"ssm_norm.weight", "linear_attn.norm.weight", GgufConversion::none},
    {"ssm_out.weight", "linear_attn.out_proj.weight", GgufConversion::head_columns},
};

// The MTP head's own tensors, stored in its first nextn block (the converter renames mtp.fc to
// model.layers.<layers>.eh_proj, …, whatever the number of MTP layers). hf: after "mtp.". Its norms
// end in "norm.weight", so Qwen3NextModel.modify_tensors stores them 1 + w like the text model's.
constexpr NameRule kNextnRules[] = {
    {"nextn.eh_proj.weight", "fc.weight", GgufConversion::none},
    {"nextn.enorm.weight", "pre_fc_norm_embedding.weight", GgufConversion::centred_norm},
    {"nextn.hnorm.weight", "pre_fc_norm_hidden.weight", GgufConversion::centred_norm},
    {"nextn.shared_head_norm.weight", "norm.weight", GgufConversion::centred_norm},
};

// The layer number at the start of `rest` ("12.attn_q.weight" → 12, rest after the dot), or nullopt.
std::optional<int64_t> leading_layer(std::string_view& rest) {
  const size_t dot = rest.find('.');
  if (dot == std::string_view::npos || dot == 0) return std::nullopt;
  int64_t layer = 0;
  for (char c : rest.substr(0, dot)) {
    if (c < '0' || c > '9' || layer > 1 << 20) return std::nullopt;
    layer = layer * 10 + (c - '0');
  }
  rest.remove_prefix(dot + 1);
  return layer;
}

}  // namespace

std::optional<GgufTensorName> gguf_to_hf_name(std::string_view gguf_name, int64_t layers, std::string_view hf_text_prefix) {
  for (const NameRule& rule : kModelRules)
    if (gguf_name == rule.gguf) return GgufTensorName{rule.gguf, str_cat(hf_text_prefix, rule.hf), rule.conversion};
  if (gguf_name == kHeadGguf) return GgufTensorName{kHeadGguf, kHeadHf};
  std::string_view rest = gguf_name;
  if (!rest.starts_with("blk.")) return std::nullopt;
  rest.remove_prefix(4);
  const std::optional<int64_t> layer = leading_layer(rest);
  if (!layer) return std::nullopt;
  if (*layer >= layers) {  // llama.cpp's nextn blocks: MTP layer layer − layers, named as a text layer
    if (*layer == layers)
      for (const NameRule& rule : kNextnRules)
        if (rest == rule.gguf) return GgufTensorName{std::string(gguf_name), str_cat(kMtpPrefix, rule.hf), rule.conversion, *layer, true};
    for (const NameRule& rule : kLayerRules)
      if (rest == rule.gguf)
        return GgufTensorName{std::string(gguf_name), str_cat(kMtpPrefix, "layers.", *layer - layers, ".", rule.hf), rule.conversion,
                              *layer, true};
    return std::nullopt;
  }
  for (const NameRule& rule : kLayerRules)
    if (rest == rule.gguf)
      return GgufTensorName{std::string(gguf_name), str_cat(hf_text_prefix, "layers.", *layer, ".", rule.hf), rule.conversion,
                            *layer};
  return std::nullopt;
}

std::optional<GgufTensorName> hf_to_gguf_name(std::string_view hf_name, std::string_view hf_text_prefix, int64_t layers) {
  if (hf_name == kHeadHf) return GgufTensorName{kHeadGguf, kHeadHf};
  if (hf_name.starts_with(kMtpPrefix)) {
    std::string_view rest = hf_name.substr(std::string_view(kMtpPrefix).size());
    for (const NameRule& rule : kNextnRules)
      if (rest == rule.hf) return GgufTensorName{str_cat("blk.", layers, ".", rule.gguf), std::string(hf_name), rule.conversion, layers, true};
    if (!rest.starts_with("layers.")) return std::nullopt;
    rest.remove_prefix(7);
    const std::optional<int64_t> mtp_layer = leading_layer(rest);
    if (!mtp_layer) return std::nullopt;
    for (const NameRule& rule : kLayerRules)
      if (rest == rule.hf)
        return GgufTensorName{str_cat("blk.", layers + *mtp_layer, ".", rule.gguf), std::string(hf_name), rule.conversion,
                              layers + *mtp_layer, true};
    return std::nullopt;
  }
  if (!hf_name.starts_with(hf_text_prefix)) return std::nullopt;
  std::string_view rest = hf_name.substr(hf_text_prefix.size());
  for (const NameRule& rule : kModelRules)
    if (rest == rule.hf) return GgufTensorName{rule.gguf, std::string(hf_name), rule.conversion};
  if (!rest.starts_with("layers.")) return std::nullopt;
  rest.remove_prefix(7);
  const std::optional<int64_t> layer = leading_layer(rest);
  if (!layer) return std::nullopt;
  for (const NameRule& rule : kLayerRules)
    if (rest == rule.hf) return GgufTensorName{str_cat("blk.", *layer, ".", rule.gguf), std::string(hf_name), rule.conversion, *layer};
  return std::nullopt;
}

Result<ValueHeadRows> value_head_rows(GgufConversion conversion, const TextConfig& c, int64_t rows, std::string_view name) {
  const int64_t nV = c.linear_num_value_heads;
  ValueHeadRows out;
  switch (conversion) {
    case GgufConversion::ssm_a: case GgufConversion::head_rows:
      out.rows_per_head = nV > 0 ? rows / nV : 0;
      break;
    case GgufConversion::qkv_rows: case GgufConversion::conv:
      out.first_row = 2 * c.key_dim();
      out.rows_per_head = c.linear_value_head_dim;
      break;
    default:
      return Status::internal("tensor \"", name, "\": its value heads are not rows");
  }
  if (out.rows_per_head < 1 || rows != out.first_row + nV * out.rows_per_head)
    return Status::errorf("tensor \"", name, "\": expected ", out.first_row, " + ", nV, " value heads × ",
                          std::max<int64_t>(out.rows_per_head, 1), " rows, found ", rows, " rows");
  return out;
}

}  // namespace ds
