// Shape presets (values: spec §1.3 table; key order as in released config.json files).
#include "model/shape_presets.h"

namespace ds {

const std::vector<ShapePreset>& shape_presets() {
  static const std::vector<ShapePreset> presets = {
      // name, description, H, layers, heads, kv, I, nK, nV, tie, vision depth/hidden/interm/heads/pos
      {"tiny", "4 layers LLLF, hidden 256, 2/4 DeltaNet key/value heads, real vocabulary and head sizes (tests)", 256, 4, 4, 2, 512, 2, 4, true,
       2, 64, 128, 2, 64},
      {"qwen3.5-0.8b", "Qwen3.5-0.8B: hidden 1024, 24 layers, tied", 1024, 24, 8, 2, 3584, 16, 16, true, 12, 768, 3072, 12, 2304},
      {"qwen3.5-2b", "Qwen3.5-2B: hidden 2048, 24 layers, tied", 2048, 24, 8, 2, 6144, 16, 16, true, 24, 1024, 4096, 16, 2304},
      {"qwen3.5-4b", "Qwen3.5-4B: hidden 2560, 32 layers, tied", 2560, 32, 16, 4, 9216, 16, 32, true, 24, 1024, 4096, 16, 2304},
      {"qwen3.5-9b", "Qwen3.5-9B: hidden 4096, 32 layers, untied", 4096, 32, 16, 4, 12288, 16, 32, false, 27, 1152, 4304, 16, 2304},
      {"qwen3.5-27b", "Qwen3.5-27B / Qwen3.6-27B: hidden 5120, 64 layers, untied", 5120, 64, 24, 4, 17408, 16, 48, false, 27,
       1152, 4304, 16, 2304},
  };
  return presets;
}

Result<ShapePreset> find_shape_preset(const std::string& name) {
  std::string names;
  for (const ShapePreset& preset : shape_presets()) {
    if (preset.name == name || preset.name == "qwen3.5-" + name) return preset;
    names += (names.empty() ? "" : ", ") + preset.name;
  }
  return Status::errorf("unknown shape \"", name, "\" (expected one of: ", names, ")");
}

nlohmann::ordered_json preset_config_json(const ShapePreset& p, bool text_only, const std::string& dtype) {
  using nlohmann::ordered_json;
  ordered_json layer_types = ordered_json::array();
  for (int64_t i = 0; i < p.num_hidden_layers; ++i)
    layer_types.push_back((i + 1) % 4 == 0 ? "full_attention" : "linear_attention");
  ordered_json text = {
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"attn_output_gate", true},
      {"dtype", dtype},
      {"eos_token_id", 248044},
      {"full_attention_interval", 4},
      {"head_dim", 256},
      {"hidden_act", "silu"},
      {"hidden_size", p.hidden_size},
      {"initializer_range", 0.02},
      {"intermediate_size", p.intermediate_size},
      {"layer_types", layer_types},
      {"linear_conv_kernel_dim", 4},
      {"linear_key_head_dim", 128},
      {"linear_num_key_heads", p.linear_num_key_heads},
      {"linear_num_value_heads", p.linear_num_value_heads},
      {"linear_value_head_dim", 128},
      {"max_position_embeddings", 262144},
      {"mlp_only_layers", ordered_json::array()},
      {"model_type", "qwen3_5_text"},
      {"mtp_num_hidden_layers", 1},
      {"mtp_use_dedicated_embeddings", false},
      {"num_attention_heads", p.num_attention_heads},
      {"num_hidden_layers", p.num_hidden_layers},
      {"num_key_value_heads", p.num_key_value_heads},
      {"rms_norm_eps", 1e-06},
      {"tie_word_embeddings", p.tie_word_embeddings},
      {"use_cache", true},
      {"vocab_size", 248320},
      {"mamba_ssm_dtype", "float32"},
      {"rope_parameters",
       {{"mrope_interleaved", true},
        {"mrope_section", {11, 11, 10}},
        {"rope_type", "default"},
        {"rope_theta", 10000000},
        {"partial_rotary_factor", 0.25}}},
  };
  if (text_only) {
    ordered_json flat = {{"architectures", {"Qwen3_5ForCausalLM"}}};
    for (const auto& [key, value] : text.items()) flat[key] = value;
    flat["transformers_version"] = "4.57.0.dev0";
    return flat;
  }
  ordered_json vision = {
      {"deepstack_visual_indexes", ordered_json::array()},
      {"depth", p.vision_depth},
      {"hidden_act", "gelu_pytorch_tanh"},
      {"hidden_size", p.vision_hidden_size},
      {"in_channels", 3},
      {"initializer_range", 0.02},
      {"intermediate_size", p.vision_intermediate_size},
      {"model_type", "qwen3_5"},
      {"num_heads", p.vision_num_heads},
      {"num_position_embeddings", p.vision_num_position_embeddings},
      {"out_hidden_size", p.hidden_size},
      {"patch_size", 16},
      {"spatial_merge_size", 2},
      {"temporal_patch_size", 2},
  };
  return ordered_json{
      {"architectures", {"Qwen3_5ForConditionalGeneration"}},
      {"image_token_id", 248056},
      {"model_type", "qwen3_5"},
      {"text_config", text},
      {"tie_word_embeddings", p.tie_word_embeddings},
      {"transformers_version", "4.57.0.dev0"},
      {"video_token_id", 248057},
      {"vision_config", vision},
      {"vision_end_token_id", 248054},
      {"vision_start_token_id", 248053},
  };
}

nlohmann::ordered_json preset_generation_config_json() {
  // Values quoted by third parties for a Qwen3.5 release (spec §7.1 / SOURCES.md); the small
  // models' own values were not found. Requests override them.
  return {{"bos_token_id", 248044}, {"do_sample", true},   {"eos_token_id", {248046, 248044}},
          {"pad_token_id", 248044}, {"temperature", 0.6},  {"top_k", 20},
          {"top_p", 0.95},          {"transformers_version", "4.57.0.dev0"}};
}

nlohmann::ordered_json preset_preprocessor_config_json() {
  return {{"size", {{"longest_edge", 16777216}, {"shortest_edge", 65536}}},
          {"patch_size", 16},
          {"temporal_patch_size", 2},
          {"merge_size", 2},
          {"image_mean", {0.5, 0.5, 0.5}},
          {"image_std", {0.5, 0.5, 0.5}},
          {"processor_class", "Qwen3VLProcessor"},
          {"image_processor_type", "Qwen2VLImageProcessorFast"}};
}

}  // namespace ds
