// Shape presets: the config.json of each released Qwen3.5 dense size (spec §1.3), plus `tiny`
// (real vocabulary, head sizes and layer pattern; small hidden size) for engine and server tests.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "util/status.h"

namespace ds {

struct ShapePreset {
  std::string name;         // "qwen3.5-0.8b"
  std::string description;  // one line for --help
  int64_t hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads, intermediate_size;
  int64_t linear_num_key_heads, linear_num_value_heads;
  bool tie_word_embeddings;
  int64_t vision_depth, vision_hidden_size, vision_intermediate_size, vision_num_heads, vision_num_position_embeddings;
};

const std::vector<ShapePreset>& shape_presets();
// Accepts the full name ("qwen3.5-2b") or the short one ("2b", "tiny").
Result<ShapePreset> find_shape_preset(const std::string& name);

// config.json as HF writes it for a released checkpoint (nested text_config / vision_config), or
// the flat text-only form (model_type qwen3_5_text, Qwen3_5ForCausalLM) when `text_only`.
// `dtype` is the HF name written in the config ("bfloat16", "float16", "float32").
nlohmann::ordered_json preset_config_json(const ShapePreset& preset, bool text_only, const std::string& dtype);
nlohmann::ordered_json preset_generation_config_json();
// preprocessor_config.json as Qwen3.5 / Qwen3.6 releases ship it (../shared/docs/qwen35-vision.md §1.1):
// written beside a checkpoint with a vision tower, which the server needs to take images.
nlohmann::ordered_json preset_preprocessor_config_json();

}  // namespace ds
