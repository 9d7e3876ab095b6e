#include "model/visible_text.h"

#include <algorithm>
#include <cstring>

#include <nlohmann/json.hpp>

#include "util/float16.h"

namespace ds {
namespace {

void store(std::span<std::byte> bytes, DType dtype, int64_t index, float value) {
  if (dtype == DType::F32) {
    std::memcpy(bytes.data() + 4 * index, &value, 4);
  } else {
    const uint16_t half = dtype == DType::BF16 ? float_to_bf16(value) : float_to_fp16(value);
    std::memcpy(bytes.data() + 2 * index, &half, 2);
  }
}

bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

}  // namespace

std::optional<std::vector<bool>> producible_ids(const std::string& tokenizer_json, int64_t vocab) {
  const auto json = nlohmann::json::parse(tokenizer_json, nullptr, false);
  if (!json.is_object() || !json.contains("model") || !json["model"].is_object() || !json["model"].contains("vocab") ||
      !json["model"]["vocab"].is_object())
    return std::nullopt;
  std::vector<bool> produced(static_cast<size_t>(vocab), false);
  for (const auto& [token, id] : json["model"]["vocab"].items())
    if (id.is_number_integer() && id.get<int64_t>() >= 0 && id.get<int64_t>() < vocab) produced[id.get<size_t>()] = true;
  if (json.contains("added_tokens") && json["added_tokens"].is_array())
    for (const auto& added : json["added_tokens"])
      if (added.value("special", false) && added.contains("id") && added["id"].is_number_integer() &&
          added["id"].get<int64_t>() >= 0 && added["id"].get<int64_t>() < vocab)
        produced[added["id"].get<size_t>()] = false;
  return produced;
}

int64_t visible_feature_dims(int64_t hidden) { return std::max<int64_t>(1, std::min(kFeatureDims, hidden / 4)); }

void visible_text_edits(const std::string& name, std::span<const int64_t> shape, const std::string& text_prefix, bool tied,
                        const std::vector<bool>& produced, FunctionRef<void(int64_t, float)> set) {
  const bool embedding = name == text_prefix + "embed_tokens.weight", head = name == "lm_head.weight";
  if (embedding || head) {  // [vocab, hidden]: the feature columns +a, −a for unproducible ids where they score them
    const bool scores = head || tied;
    const int64_t dims = visible_feature_dims(shape[1]);
    for (int64_t id = 0; id < shape[0]; ++id) {
      const bool visible = static_cast<size_t>(id) < produced.size() && produced[static_cast<size_t>(id)];
      for (int64_t d = 0; d < dims; ++d) set(id * shape[1] + d, visible || !scores ? kFeatureValue : -kFeatureValue);
    }
    return;
  }
  const bool final_norm = name == text_prefix + "norm.weight";
  const bool layer_norm = name.rfind(text_prefix + "layers.", 0) == 0 &&
                          (ends_with(name, ".input_layernorm.weight") || ends_with(name, ".post_attention_layernorm.weight"));
  if (final_norm || layer_norm) {  // [hidden], zero-centred: stored = scale − 1
    for (int64_t d = 0; d < visible_feature_dims(shape[0]); ++d) set(d, final_norm ? kFinalScale - 1.0f : -1.0f);
    return;
  }
  if (name.rfind(text_prefix + "layers.", 0) != 0) return;
  if (ends_with(name, ".self_attn.o_proj.weight") || ends_with(name, ".linear_attn.out_proj.weight") ||
      ends_with(name, ".mlp.down_proj.weight"))
    for (int64_t d = 0; d < visible_feature_dims(shape[0]); ++d)
      for (int64_t col = 0; col < shape[1]; ++col) set(d * shape[1] + col, 0.0f);  // [hidden, in]: the feature rows
}

void make_text_visible(const std::string& name, std::span<const int64_t> shape, DType dtype, std::span<std::byte> bytes,
                       const std::string& text_prefix, bool tied, const std::vector<bool>& produced) {
  visible_text_edits(name, shape, text_prefix, tied, produced, [&](int64_t index, float value) { store(bytes, dtype, index, value); });
}

}  // namespace ds
