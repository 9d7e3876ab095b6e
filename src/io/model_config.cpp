// config.json -> ModelConfig, with HF's defaults where HF has them and range checks everywhere,
// so a hostile or broken config yields one clear message and never an absurd allocation later.
#include "io/model_config.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "io/json_reader.h"

namespace ds {
namespace {

constexpr int64_t kMaxDim = 1 << 20;

Result<RopeParameters> parse_rope(const JsonReader& text) {
  RopeParameters rope;
  // Current HF writes `rope_parameters`; older saves have `rope_scaling` + top-level rope_theta.
  const bool modern = text.has("rope_parameters");
  if (modern || text.has("rope_scaling")) {
    DS_ASSIGN_OR_RETURN(const JsonReader params, text.child(modern ? "rope_parameters" : "rope_scaling"));
    DS_ASSIGN_OR_RETURN(rope.rope_type, params.get_string_or("rope_type", params.has("type") ? "" : "default"));
    if (rope.rope_type.empty()) {
      DS_ASSIGN_OR_RETURN(rope.rope_type, params.get_string("type"));
    }
    DS_ASSIGN_OR_RETURN(rope.rope_theta, params.get_double_or("rope_theta", rope.rope_theta));
    DS_ASSIGN_OR_RETURN(rope.partial_rotary_factor, params.get_double_or("partial_rotary_factor", rope.partial_rotary_factor));
    if (params.has("mrope_section")) {
      DS_ASSIGN_OR_RETURN(rope.mrope_section, params.get_int_list("mrope_section", 0, kMaxDim));
    } else {
      rope.mrope_section.clear();
    }
    DS_ASSIGN_OR_RETURN(rope.mrope_interleaved, params.get_bool_or("mrope_interleaved", true));
  } else {
    rope.mrope_section.clear();
  }
  if (!modern) {
    DS_ASSIGN_OR_RETURN(rope.rope_theta, text.get_double_or("rope_theta", rope.rope_theta));
    DS_ASSIGN_OR_RETURN(rope.partial_rotary_factor, text.get_double_or("partial_rotary_factor", rope.partial_rotary_factor));
  }
  if (rope.rope_type != "default")
    return Status::errorf(text.where("rope_parameters.rope_type"), ": \"", rope.rope_type,
                          "\" is not supported yet (supported: \"default\")");
  if (!(rope.rope_theta > 1.0) || !std::isfinite(rope.rope_theta))
    return Status::errorf(text.where("rope_parameters.rope_theta"), ": expected a finite number > 1, found ", rope.rope_theta);
  if (!(rope.partial_rotary_factor > 0.0 && rope.partial_rotary_factor <= 1.0))
    return Status::errorf(text.where("rope_parameters.partial_rotary_factor"), ": expected a number in (0, 1], found ",
                          rope.partial_rotary_factor);
  if (!rope.mrope_section.empty() && rope.mrope_section.size() != 3)
    return Status::errorf(text.where("rope_parameters.mrope_section"), ": expected 3 sections (T, H, W), found ",
                          rope.mrope_section.size());
  return rope;
}

Result<TextConfig> parse_text(const JsonReader& text) {
  TextConfig c;
  DS_ASSIGN_OR_RETURN(c.model_type, text.get_string_or("model_type", "qwen3_5_text"));
  DS_ASSIGN_OR_RETURN(c.vocab_size, text.get_int("vocab_size", 1, 1 << 24));
  DS_ASSIGN_OR_RETURN(c.hidden_size, text.get_int("hidden_size", 1, kMaxDim));
  DS_ASSIGN_OR_RETURN(c.intermediate_size, text.get_int("intermediate_size", 1, kMaxDim));
  DS_ASSIGN_OR_RETURN(c.num_hidden_layers, text.get_int("num_hidden_layers", 1, 1024));
  DS_ASSIGN_OR_RETURN(c.num_attention_heads, text.get_int("num_attention_heads", 1, 1024));
  DS_ASSIGN_OR_RETURN(c.num_key_value_heads, text.get_int("num_key_value_heads", 1, 1024));
  DS_ASSIGN_OR_RETURN(c.head_dim, text.get_int_or("head_dim", 256, 2, 4096));
  DS_ASSIGN_OR_RETURN(c.linear_conv_kernel_dim, text.get_int("linear_conv_kernel_dim", 1, 64));
  DS_ASSIGN_OR_RETURN(c.linear_key_head_dim, text.get_int("linear_key_head_dim", 1, 4096));
  DS_ASSIGN_OR_RETURN(c.linear_value_head_dim, text.get_int("linear_value_head_dim", 1, 4096));
  DS_ASSIGN_OR_RETURN(c.linear_num_key_heads, text.get_int("linear_num_key_heads", 1, 1024));
  DS_ASSIGN_OR_RETURN(c.linear_num_value_heads, text.get_int("linear_num_value_heads", 1, 1024));
  DS_ASSIGN_OR_RETURN(c.max_position_embeddings, text.get_int_or("max_position_embeddings", 32768, 1, INT32_MAX));
  DS_ASSIGN_OR_RETURN(c.rms_norm_eps, text.get_double_or("rms_norm_eps", 1e-6));
  DS_ASSIGN_OR_RETURN(c.hidden_act, text.get_string_or("hidden_act", "silu"));
  DS_ASSIGN_OR_RETURN(c.attention_bias, text.get_bool_or("attention_bias", false));
  DS_ASSIGN_OR_RETURN(c.eos_token_id, text.get_int_or_int_list("eos_token_id"));
  DS_ASSIGN_OR_RETURN(c.mtp_num_hidden_layers, text.get_int_or("mtp_num_hidden_layers", 0, 0, 64));
  DS_ASSIGN_OR_RETURN(c.dtype, text.get_string_or("dtype", ""));
  if (c.dtype.empty()) {
    DS_ASSIGN_OR_RETURN(c.dtype, text.get_string_or("torch_dtype", ""));
  }
  DS_ASSIGN_OR_RETURN(c.rope, parse_rope(text));

  if (c.model_type != "qwen3_5_text")
    return Status::errorf(text.where("model_type"), ": expected \"qwen3_5_text\", found \"", c.model_type, "\"");
  if (!(c.rms_norm_eps > 0.0) || !std::isfinite(c.rms_norm_eps))
    return Status::errorf(text.where("rms_norm_eps"), ": expected a finite number > 0, found ", c.rms_norm_eps);
  if (c.hidden_act != "silu")
    return Status::errorf(text.where("hidden_act"), ": \"", c.hidden_act, "\" is not supported (Qwen3.5 uses \"silu\")");
  if (c.attention_bias)
    return Status::errorf(text.where("attention_bias"), ": true is not supported (Qwen3.5 has no attention bias)");
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    return Status::errorf(text.where("num_attention_heads"), ": ", c.num_attention_heads,
                          " is not a multiple of num_key_value_heads ", c.num_key_value_heads);
  if (c.linear_num_value_heads % c.linear_num_key_heads != 0)
    return Status::errorf(text.where("linear_num_value_heads"), ": ", c.linear_num_value_heads,
                          " is not a multiple of linear_num_key_heads ", c.linear_num_key_heads);
  const int64_t rotary = c.rotary_dim();
  if (rotary < 2 || rotary % 2 != 0)
    return Status::errorf(text.where("rope_parameters.partial_rotary_factor"), ": head_dim ", c.head_dim, " × ",
                          c.rope.partial_rotary_factor, " gives rotary dim ", rotary, ", expected an even number >= 2");
  if (!c.rope.mrope_section.empty()) {
    int64_t sum = 0;
    for (int64_t section : c.rope.mrope_section) sum += section;
    if (sum != rotary / 2)
      return Status::errorf(text.where("rope_parameters.mrope_section"), ": sections sum to ", sum,
                            ", expected rotary_dim / 2 = ", rotary / 2);
  }

  if (text.has("layer_types")) {
    DS_ASSIGN_OR_RETURN(const auto names, text.get_string_list("layer_types"));
    if (static_cast<int64_t>(names.size()) != c.num_hidden_layers)
      return Status::errorf(text.where("layer_types"), ": ", names.size(), " entries, expected num_hidden_layers = ",
                            c.num_hidden_layers);
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == "linear_attention") c.layer_types.push_back(LayerType::linear_attention);
      else if (names[i] == "full_attention") c.layer_types.push_back(LayerType::full_attention);
      else
        return Status::errorf(text.where("layer_types"), "[", i, "]: unknown layer type \"", names[i],
                              "\" (expected \"linear_attention\" or \"full_attention\")");
    }
  } else {
    // HF: layer i is full attention iff (i + 1) % full_attention_interval == 0.
    DS_ASSIGN_OR_RETURN(const int64_t interval, text.get_int_or("full_attention_interval", 4, 1, 1024));
    for (int64_t i = 0; i < c.num_hidden_layers; ++i)
      c.layer_types.push_back((i + 1) % interval == 0 ? LayerType::full_attention : LayerType::linear_attention);
  }
  return c;
}

Result<VisionConfig> parse_vision(const JsonReader& vision) {
  VisionConfig v;
  DS_ASSIGN_OR_RETURN(const std::string model_type, vision.get_string_or("model_type", "qwen3_5_vision"));
  if (model_type != "qwen3_5" && model_type != "qwen3_5_vision")
    return Status::errorf(vision.where("model_type"), ": expected \"qwen3_5\" or \"qwen3_5_vision\", found \"", model_type, "\"");
  DS_ASSIGN_OR_RETURN(v.depth, vision.get_int("depth", 1, 1024));
  DS_ASSIGN_OR_RETURN(v.hidden_size, vision.get_int("hidden_size", 1, kMaxDim));
  DS_ASSIGN_OR_RETURN(v.intermediate_size, vision.get_int("intermediate_size", 1, kMaxDim));
  DS_ASSIGN_OR_RETURN(v.num_heads, vision.get_int("num_heads", 1, 1024));
  DS_ASSIGN_OR_RETURN(v.in_channels, vision.get_int_or("in_channels", 3, 1, 16));
  DS_ASSIGN_OR_RETURN(v.patch_size, vision.get_int_or("patch_size", 16, 1, 1024));
  DS_ASSIGN_OR_RETURN(v.spatial_merge_size, vision.get_int_or("spatial_merge_size", 2, 1, 16));
  DS_ASSIGN_OR_RETURN(v.temporal_patch_size, vision.get_int_or("temporal_patch_size", 2, 1, 16));
  DS_ASSIGN_OR_RETURN(v.out_hidden_size, vision.get_int("out_hidden_size", 1, kMaxDim));
  DS_ASSIGN_OR_RETURN(v.num_position_embeddings, vision.get_int("num_position_embeddings", 1, kMaxDim));
  DS_ASSIGN_OR_RETURN(v.hidden_act, vision.get_string_or("hidden_act", "gelu_pytorch_tanh"));
  if (vision.has("rope_parameters")) {  // written by transformers ≥ 5; the released files leave it out
    DS_ASSIGN_OR_RETURN(const JsonReader rope, vision.child("rope_parameters"));
    DS_ASSIGN_OR_RETURN(v.rope_theta, rope.get_double_or("rope_theta", v.rope_theta));
    if (!(v.rope_theta > 1)) return Status::errorf(rope.where("rope_theta"), ": expected a number above 1, found ", v.rope_theta);
  }
  if (v.hidden_size % v.num_heads != 0)
    return Status::errorf(vision.where("hidden_size"), ": ", v.hidden_size, " is not a multiple of num_heads ", v.num_heads);
  const auto side = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(v.num_position_embeddings))));
  if (side * side != v.num_position_embeddings)
    return Status::errorf(vision.where("num_position_embeddings"), ": ", v.num_position_embeddings,
                          " is not a perfect square (the learned grid is side × side)");
  return v;
}

Result<std::optional<QuantizationConfig>> quantization_of(const JsonReader& owner) {
  if (!owner.has("quantization_config")) return std::optional<QuantizationConfig>();
  DS_ASSIGN_OR_RETURN(const JsonReader q, owner.child("quantization_config"));
  DS_ASSIGN_OR_RETURN(QuantizationConfig config, parse_quantization_config(q));
  return std::optional<QuantizationConfig>(std::move(config));
}

Status unsupported_model_type(const std::string& source, const std::string& model_type) {
  if (model_type == "qwen3_5_moe" || model_type == "qwen3_5_moe_text")
    return Status::errorf(source, ": model_type \"", model_type, "\" (Qwen3.5 MoE) is not supported yet; dense Qwen3.5 / Qwen3.6 is");
  return Status::errorf(source, ": unknown model_type \"", model_type,
                        "\" (expected \"qwen3_5\" for released checkpoints or \"qwen3_5_text\" for text-only saves)");
}

}  // namespace

const char* layer_type_name(LayerType type) {
  return type == LayerType::full_attention ? "full_attention" : "linear_attention";
}

int64_t TextConfig::num_layers_of(LayerType type) const {
  int64_t count = 0;
  for (LayerType layer : layer_types) count += layer == type ? 1 : 0;
  return count;
}

Result<ModelConfig> parse_model_config(const std::string& text, const std::string& source) {
  DS_ASSIGN_OR_RETURN(const nlohmann::json json, JsonReader::parse(text, source));
  const JsonReader top(json, source + ": ");
  ModelConfig config;
  if (!top.has("model_type")) return Status::errorf(source, ": missing \"model_type\" (expected \"qwen3_5\" or \"qwen3_5_text\")");
  DS_ASSIGN_OR_RETURN(config.model_type, top.get_string("model_type"));
  if (top.has("architectures")) {
    DS_ASSIGN_OR_RETURN(config.architectures, top.get_string_list("architectures"));
  }
  DS_ASSIGN_OR_RETURN(config.transformers_version, top.get_string_or("transformers_version", ""));

  if (config.model_type == "qwen3_5") {
    config.nested = true;
    DS_ASSIGN_OR_RETURN(const JsonReader text_reader, top.child("text_config"));
    DS_ASSIGN_OR_RETURN(config.text, parse_text(text_reader));
    if (top.has("vision_config")) {
      DS_ASSIGN_OR_RETURN(const JsonReader vision_reader, top.child("vision_config"));
      DS_ASSIGN_OR_RETURN(config.vision, parse_vision(vision_reader));
    }
    // Released files put tie_word_embeddings at the top level; text_config may repeat it.
    DS_ASSIGN_OR_RETURN(const bool text_tie, text_reader.get_bool_or("tie_word_embeddings", false));
    DS_ASSIGN_OR_RETURN(config.tie_word_embeddings, top.get_bool_or("tie_word_embeddings", text_tie));
    DS_ASSIGN_OR_RETURN(config.image_token_id, top.get_int_or("image_token_id", config.image_token_id, 0, INT32_MAX));
    DS_ASSIGN_OR_RETURN(config.video_token_id, top.get_int_or("video_token_id", config.video_token_id, 0, INT32_MAX));
    DS_ASSIGN_OR_RETURN(config.vision_start_token_id,
                        top.get_int_or("vision_start_token_id", config.vision_start_token_id, 0, INT32_MAX));
    DS_ASSIGN_OR_RETURN(config.vision_end_token_id,
                        top.get_int_or("vision_end_token_id", config.vision_end_token_id, 0, INT32_MAX));
    // Qwen's releases put quantization_config at the top level; some loaders also accept it in text_config.
    DS_ASSIGN_OR_RETURN(config.quantization, quantization_of(top.has("quantization_config") ? top : text_reader));
  } else if (config.model_type == "qwen3_5_text") {
    DS_ASSIGN_OR_RETURN(config.text, parse_text(top));
    DS_ASSIGN_OR_RETURN(config.tie_word_embeddings, top.get_bool_or("tie_word_embeddings", false));
    DS_ASSIGN_OR_RETURN(config.quantization, quantization_of(top));
  } else {
    return unsupported_model_type(source, config.model_type);
  }
  return config;
}

Result<ModelConfig> load_model_config(const std::string& dir) {
  const std::filesystem::path path = std::filesystem::path(dir) / "config.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::errorf("cannot read ", path.string(), " (a checkpoint directory needs config.json)");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parse_model_config(buffer.str(), "config.json");
}

}  // namespace ds
