// qwen35.* → config.json keys. Key names: gguf-py constants.py (LLM_KV_*), values as
// conversion/qwen.py (Qwen3NextModel.set_gguf_parameters) writes them.
#include "model/gguf_config.h"

#include <memory>

#include <nlohmann/json.hpp>

namespace ds {
namespace {

// A metadata entry of the architecture, `qwen35.<key>`.
class ArchKeys {
 public:
  ArchKeys(const GgufFile& gguf, std::string label) : gguf_(gguf), label_(std::move(label)) {}
  Result<int64_t> integer(const std::string& key) const {
    DS_ASSIGN_OR_RETURN(const GgufEntry* entry, require(key));
    return entry->integer();
  }
  Result<int64_t> integer_or(const std::string& key, int64_t fallback) const {
    const GgufEntry* entry = gguf_.find(name(key));
    return entry ? entry->integer() : Result<int64_t>(fallback);
  }
  Result<double> number(const std::string& key) const {
    DS_ASSIGN_OR_RETURN(const GgufEntry* entry, require(key));
    return entry->number();
  }
  const GgufEntry* find(const std::string& key) const { return gguf_.find(name(key)); }

 private:
  std::string name(const std::string& key) const { return std::string(kGgufArchitecture) + "." + key; }
  Result<const GgufEntry*> require(const std::string& key) const {
    auto entry = gguf_.require(name(key));
    if (!entry.ok()) return entry.status().with_context(label_);
    return entry;
  }
  const GgufFile& gguf_;
  std::string label_;
};

}  // namespace

Result<ModelConfig> gguf_model_config(const GgufFile& gguf, int64_t vocab_size, bool tied, const std::string& label) {
  DS_ASSIGN_OR_RETURN(const GgufEntry* arch_entry, gguf.require("general.architecture"));
  DS_ASSIGN_OR_RETURN(const std::string_view arch, arch_entry->string());
  if (arch != kGgufArchitecture)
    return Status::errorf(label, ": architecture \"", arch, "\" is not supported (expected \"", kGgufArchitecture,
                          "\", dense Qwen3.5 / Qwen3.6", arch == "qwen35moe" ? "; the MoE models are not supported yet" : "",
                          ")");
  const ArchKeys k(gguf, label);
  DS_ASSIGN_OR_RETURN(const int64_t blocks, k.integer("block_count"));
  DS_ASSIGN_OR_RETURN(const int64_t mtp, k.integer_or("nextn_predict_layers", 0));
  DS_ASSIGN_OR_RETURN(const int64_t head_dim, k.integer("attention.key_length"));
  DS_ASSIGN_OR_RETURN(const int64_t value_length, k.integer_or("attention.value_length", head_dim));
  if (value_length != head_dim)
    return Status::errorf(label, ": qwen35.attention.value_length ", value_length, " differs from key_length ", head_dim,
                          " (Qwen3.5 has one head_dim)");
  DS_ASSIGN_OR_RETURN(const int64_t rope_dims, k.integer("rope.dimension_count"));
  DS_ASSIGN_OR_RETURN(const int64_t value_heads, k.integer("ssm.time_step_rank"));
  DS_ASSIGN_OR_RETURN(const int64_t inner, k.integer("ssm.inner_size"));
  if (value_heads < 1 || inner % value_heads != 0)
    return Status::errorf(label, ": qwen35.ssm.inner_size ", inner, " is not a multiple of ssm.time_step_rank ", value_heads);

  nlohmann::json text;
  text["model_type"] = "qwen3_5_text";
  text["vocab_size"] = vocab_size;
  text["num_hidden_layers"] = blocks - mtp;
  text["mtp_num_hidden_layers"] = mtp;
  DS_ASSIGN_OR_RETURN(text["hidden_size"], k.integer("embedding_length"));
  DS_ASSIGN_OR_RETURN(text["intermediate_size"], k.integer("feed_forward_length"));
  DS_ASSIGN_OR_RETURN(text["num_attention_heads"], k.integer("attention.head_count"));
  DS_ASSIGN_OR_RETURN(text["num_key_value_heads"], k.integer("attention.head_count_kv"));
  text["head_dim"] = head_dim;
  DS_ASSIGN_OR_RETURN(text["linear_conv_kernel_dim"], k.integer("ssm.conv_kernel"));
  DS_ASSIGN_OR_RETURN(text["linear_key_head_dim"], k.integer("ssm.state_size"));
  DS_ASSIGN_OR_RETURN(text["linear_num_key_heads"], k.integer("ssm.group_count"));
  text["linear_num_value_heads"] = value_heads;
  text["linear_value_head_dim"] = inner / value_heads;
  DS_ASSIGN_OR_RETURN(text["max_position_embeddings"], k.integer("context_length"));
  DS_ASSIGN_OR_RETURN(text["rms_norm_eps"], k.number("attention.layer_norm_rms_epsilon"));
  nlohmann::json rope;
  rope["rope_type"] = "default";
  DS_ASSIGN_OR_RETURN(rope["rope_theta"], k.number("rope.freq_base"));
  rope["partial_rotary_factor"] = static_cast<double>(rope_dims) / static_cast<double>(head_dim);
  if (const GgufEntry* sections = k.find("rope.dimension_sections")) {
    DS_ASSIGN_OR_RETURN(std::vector<int64_t> values, sections->integers());
    if (values.size() == 4 && values[3] == 0) values.pop_back();  // llama.cpp pads T, H, W with a fourth 0
    rope["mrope_section"] = values;
  }
  text["rope_parameters"] = rope;
  if (const GgufEntry* recurrent = k.find("attention.recurrent_layers")) {
    if (recurrent->element_type != GgufType::boolean)
      return Status::errorf(label, ": qwen35.attention.recurrent_layers: expected an array of bool, found ",
                            gguf_type_name(recurrent->element_type));
    std::vector<std::string> types;
    for (uint64_t i = 0; i < recurrent->count && i < static_cast<uint64_t>(blocks - mtp); ++i)
      types.push_back(recurrent->numbers[i] != std::byte{0} ? "linear_attention" : "full_attention");
    text["layer_types"] = types;
  } else {
    DS_ASSIGN_OR_RETURN(text["full_attention_interval"], k.integer("full_attention_interval"));
  }
  if (const GgufEntry* eos = gguf.find("tokenizer.ggml.eos_token_id")) {
    DS_ASSIGN_OR_RETURN(text["eos_token_id"], eos->integer());
  }
  text["tie_word_embeddings"] = tied;
  text["dtype"] = "GGUF (tensor types per file above)";
  const std::string source = label + " (qwen35.* metadata read as config.json)";
  DS_ASSIGN_OR_RETURN(ModelConfig config, parse_model_config(text.dump(), source));
  if (config.text.rotary_dim() != rope_dims)
    return Status::errorf(label, ": qwen35.rope.dimension_count ", rope_dims, " is not head_dim ", head_dim,
                          " × a partial rotary factor");
  return config;
}

void set_gguf_model_config(const TextConfig& c, GgufMetadata& m, int64_t nextn_layers) {
  const std::string arch = kGgufArchitecture;
  auto u32 = [&](const char* key, int64_t value) { m.set_number<uint32_t>(arch + "." + key, static_cast<uint32_t>(value)); };
  m.set_string("general.architecture", arch);
  u32("block_count", c.num_hidden_layers + nextn_layers);
  u32("context_length", c.max_position_embeddings);
  u32("embedding_length", c.hidden_size);
  u32("feed_forward_length", c.intermediate_size);
  u32("attention.head_count", c.num_attention_heads);
  u32("attention.head_count_kv", c.num_key_value_heads);
  std::vector<int32_t> sections(c.rope.mrope_section.begin(), c.rope.mrope_section.end());
  sections.resize(4, 0);  // T, H, W padded with a fourth 0, as the converter writes
  m.set_array<int32_t>(arch + ".rope.dimension_sections", sections);
  m.set_number<float>(arch + ".rope.freq_base", static_cast<float>(c.rope.rope_theta));
  m.set_number<float>(arch + ".attention.layer_norm_rms_epsilon", static_cast<float>(c.rms_norm_eps));
  u32("attention.key_length", c.head_dim);
  u32("attention.value_length", c.head_dim);
  if (nextn_layers > 0) u32("nextn_predict_layers", nextn_layers);  // _QwenMtpMixin.set_gguf_parameters
  u32("ssm.conv_kernel", c.linear_conv_kernel_dim);
  u32("ssm.state_size", c.linear_key_head_dim);
  u32("ssm.group_count", c.linear_num_key_heads);
  u32("ssm.time_step_rank", c.linear_num_value_heads);
  u32("ssm.inner_size", c.value_dim());
  const size_t layers = c.layer_types.size() + static_cast<size_t>(nextn_layers);
  const auto recurrent = std::make_unique<bool[]>(layers);  // std::vector<bool> has no contiguous bools; nextn: false
  for (size_t i = 0; i < c.layer_types.size(); ++i) recurrent[i] = c.layer_types[i] == LayerType::linear_attention;
  m.set_array<bool>(arch + ".attention.recurrent_layers", std::span<const bool>(recurrent.get(), layers));
  u32("full_attention_interval", 4);  // the converter's default; recurrent_layers says which layers are which
  u32("rope.dimension_count", c.rotary_dim());
}

Result<ModelConfig> gguf_model_config(const GgufSet& set, const std::string& label) {
  const GgufSetTensor* embed = set.tensor("token_embd.weight");
  if (embed == nullptr || embed->info->shape.size() != 2)
    return Status::errorf(label, ": missing tensor \"token_embd.weight\" (expected [hidden, vocab] in ggml order)");
  return gguf_model_config(set.metadata(), embed->info->shape[1], set.tensor("output.weight") == nullptr, label);
}

}  // namespace ds
