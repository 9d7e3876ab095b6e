// Micro checkpoints for tests (see micro_checkpoint.h).
#include "micro_checkpoint.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "io/safetensors_checkpoint.h"

namespace ds::test {

nlohmann::ordered_json micro_config_json(const MicroOptions& options) {
  nlohmann::ordered_json layer_types = nlohmann::ordered_json::array();
  for (int i = 0; i < options.layers; ++i) layer_types.push_back((i + 1) % 4 == 0 ? "full_attention" : "linear_attention");
  const bool blocks = options.block_sized;
  const int hidden = blocks ? 256 : 64, head = blocks ? 64 : 32, linear_head = blocks ? 64 : 16;
  nlohmann::ordered_json text = {
      {"model_type", "qwen3_5_text"}, {"vocab_size", 512}, {"hidden_size", hidden}, {"intermediate_size", blocks ? 512 : 96},
      {"num_hidden_layers", options.layers}, {"layer_types", layer_types}, {"num_attention_heads", 4},
      {"num_key_value_heads", 2}, {"head_dim", head}, {"linear_conv_kernel_dim", 4}, {"linear_key_head_dim", linear_head},
      {"linear_value_head_dim", linear_head}, {"linear_num_key_heads", 2}, {"linear_num_value_heads", 4},
      {"max_position_embeddings", 4096}, {"rms_norm_eps", 1e-6}, {"hidden_act", "silu"},
      {"tie_word_embeddings", options.tied}, {"mtp_num_hidden_layers", 1},
      {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 10000000}, {"partial_rotary_factor", 0.25},
                           {"mrope_section", blocks ? nlohmann::ordered_json{4, 2, 2} : nlohmann::ordered_json{2, 1, 1}},
                           {"mrope_interleaved", true}}}};
  if (!options.nested) return text;
  return {{"architectures", {"Qwen3_5ForConditionalGeneration"}},
          {"model_type", "qwen3_5"},
          {"text_config", text},
          {"vision_config", {{"model_type", "qwen3_5"}, {"depth", 1}, {"hidden_size", 32}, {"intermediate_size", 48},
                             {"num_heads", 2}, {"out_hidden_size", hidden}, {"num_position_embeddings", 16},
                             {"patch_size", 4}, {"spatial_merge_size", 2}, {"temporal_patch_size", 2}}},
          {"tie_word_embeddings", options.tied}};
}

TokenizerAssets micro_assets() { return {"{}", "{}", "{{ messages }}"}; }

void write_micro_checkpoint(const std::string& dir, const MicroOptions& options, RandomCheckpointOptions writer) {
  writer.out_dir = dir;
  const Status status = write_random_checkpoint(micro_config_json(options), writer, micro_assets());
  ASSERT_TRUE(status.ok()) << status.message();
}

void rewrite_checkpoint(const std::string& src, const std::string& dst,
                        const std::function<void(std::vector<EditableTensor>&)>& edit) {
  namespace fs = std::filesystem;
  auto checkpoint = SafetensorsCheckpoint::open_dir(src);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().message();
  std::vector<EditableTensor> tensors;
  for (const auto& [name, view] : checkpoint->tensors())
    tensors.push_back({TensorDecl{name, view.dtype, view.shape},
                       std::string(reinterpret_cast<const char*>(view.data), view.nbytes)});
  edit(tensors);
  fs::create_directories(dst);
  fs::copy_file(fs::path(src) / "config.json", fs::path(dst) / "config.json", fs::copy_options::overwrite_existing);
  std::vector<TensorDecl> decls;
  for (const EditableTensor& tensor : tensors) decls.push_back(tensor.decl);
  auto writer = SafetensorsWriter::create((fs::path(dst) / "model.safetensors").string(), decls, {{"format", "pt"}});
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  for (size_t i = 0; i < tensors.size(); ++i) {
    auto span = writer->data(i);
    ASSERT_EQ(span.size(), tensors[i].bytes.size()) << tensors[i].decl.name;
    std::memcpy(span.data(), tensors[i].bytes.data(), span.size());
  }
  ASSERT_TRUE(writer->close().ok());
}

}  // namespace ds::test
