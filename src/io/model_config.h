// ModelConfig: config.json of a Qwen3.5 / Qwen3.6 checkpoint, mirroring HF's Qwen3_5Config /
// Qwen3_5TextConfig / Qwen3_5VisionConfig key names so grep works across projects.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "io/quantization_config.h"
#include "util/status.h"

namespace ds {

enum class LayerType { linear_attention, full_attention };  // HF `layer_types` values
const char* layer_type_name(LayerType type);

struct RopeParameters {
  std::string rope_type = "default";
  double rope_theta = 10000000.0;
  double partial_rotary_factor = 0.25;
  std::vector<int64_t> mrope_section{11, 11, 10};
  bool mrope_interleaved = true;  // informational: HF always interleaves
};

struct TextConfig {
  std::string model_type;  // "qwen3_5_text"
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;
  int64_t head_dim = 0;
  int64_t linear_conv_kernel_dim = 0;
  int64_t linear_key_head_dim = 0;
  int64_t linear_value_head_dim = 0;
  int64_t linear_num_key_heads = 0;
  int64_t linear_num_value_heads = 0;
  int64_t max_position_embeddings = 0;
  double rms_norm_eps = 1e-6;
  std::string hidden_act = "silu";
  bool attention_bias = false;
  std::vector<LayerType> layer_types;
  RopeParameters rope;
  std::vector<int64_t> eos_token_id;
  int64_t mtp_num_hidden_layers = 0;
  std::string dtype;  // "bfloat16" etc. as written (informational)

  // Derived sizes (HF names where HF has them).
  int64_t key_dim() const { return linear_num_key_heads * linear_key_head_dim; }
  int64_t value_dim() const { return linear_num_value_heads * linear_value_head_dim; }
  int64_t conv_dim() const { return 2 * key_dim() + value_dim(); }
  int64_t rotary_dim() const { return static_cast<int64_t>(static_cast<double>(head_dim) * rope.partial_rotary_factor); }
  int64_t num_layers_of(LayerType type) const;
};

struct VisionConfig {
  int64_t depth = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_heads = 0;
  int64_t in_channels = 3;
  int64_t patch_size = 16;
  int64_t spatial_merge_size = 2;
  int64_t temporal_patch_size = 2;
  int64_t out_hidden_size = 0;
  int64_t num_position_embeddings = 0;
  std::string hidden_act;
  double rope_theta = 10000.0;  // rope_parameters.rope_theta of the 2-D rotary (HF's default)
};

struct ModelConfig {
  std::string model_type;                  // "qwen3_5" (nested VLM form) or "qwen3_5_text" (flat)
  std::vector<std::string> architectures;
  bool nested = false;                     // text_config / vision_config sub-objects
  TextConfig text;
  std::optional<VisionConfig> vision;
  bool tie_word_embeddings = false;
  int64_t image_token_id = 248056;
  int64_t video_token_id = 248057;
  int64_t vision_start_token_id = 248053;
  int64_t vision_end_token_id = 248054;
  std::string transformers_version;
  // `quantization_config` (top level, or under text_config): block FP8 only (quantization_config.h).
  std::optional<QuantizationConfig> quantization;
};

// Parses and validates config.json text; `source` labels errors.
Result<ModelConfig> parse_model_config(const std::string& text, const std::string& source = "config.json");
// Reads DIR/config.json.
Result<ModelConfig> load_model_config(const std::string& dir);

}  // namespace ds
