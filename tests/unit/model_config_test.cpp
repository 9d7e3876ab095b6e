// config.json parsing: released nested form, flat text-only form, legacy rope keys, HF defaults,
// and one clear message per kind of bad input.
#include "io/model_config.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace ds {
namespace {

const std::string kFlat = R"({"model_type":"qwen3_5_text","vocab_size":99,"hidden_size":32,"intermediate_size":37,
  "num_hidden_layers":2,"layer_types":["full_attention","linear_attention"],"num_attention_heads":2,
  "num_key_value_heads":2,"head_dim":32,"linear_conv_kernel_dim":2,"linear_key_head_dim":16,
  "linear_value_head_dim":16,"linear_num_key_heads":4,"linear_num_value_heads":8,
  "rope_parameters":{"rope_type":"default","rope_theta":10000,"mrope_section":[2,1,1],"mrope_interleaved":true}})";

std::string with(const std::string& base, const std::string& key, const std::string& value) {
  auto json = nlohmann::json::parse(base);
  json[key] = nlohmann::json::parse(value);
  return json.dump();
}
std::string without(const std::string& base, const std::string& key) {
  auto json = nlohmann::json::parse(base);
  json.erase(key);
  return json.dump();
}

TEST(ModelConfig, ParsesReleased27BConfig) {
  auto config = parse_model_config(test::read_file(DS_TEST_DATA_DIR "/qwen3.5-27b.config.json"));
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_TRUE(config->nested);
  EXPECT_EQ(config->model_type, "qwen3_5");
  EXPECT_EQ(config->architectures.at(0), "Qwen3_5ForConditionalGeneration");
  const TextConfig& t = config->text;
  EXPECT_EQ(t.hidden_size, 5120);
  EXPECT_EQ(t.num_hidden_layers, 64);
  EXPECT_EQ(t.num_layers_of(LayerType::full_attention), 16);
  EXPECT_EQ(t.layer_types[3], LayerType::full_attention);
  EXPECT_EQ(t.conv_dim(), 10240);
  EXPECT_EQ(t.rotary_dim(), 64);
  EXPECT_EQ(t.rope.mrope_section, (std::vector<int64_t>{11, 11, 10}));
  EXPECT_DOUBLE_EQ(t.rope.rope_theta, 1e7);
  EXPECT_EQ(t.eos_token_id, (std::vector<int64_t>{248044}));
  EXPECT_FALSE(config->tie_word_embeddings);
  ASSERT_TRUE(config->vision.has_value());
  EXPECT_EQ(config->vision->depth, 27);
  EXPECT_EQ(config->vision->out_hidden_size, 5120);
}

TEST(ModelConfig, ParsesFlatTextOnlyConfigWithHfDefaults) {
  auto config = parse_model_config(kFlat);
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_FALSE(config->nested);
  EXPECT_FALSE(config->vision.has_value());
  EXPECT_FALSE(config->tie_word_embeddings);
  EXPECT_DOUBLE_EQ(config->text.rms_norm_eps, 1e-6);
  EXPECT_DOUBLE_EQ(config->text.rope.partial_rotary_factor, 0.25);
  EXPECT_EQ(config->text.rotary_dim(), 8);
  EXPECT_EQ(config->text.layer_types[0], LayerType::full_attention);
}

TEST(ModelConfig, BuildsLayerTypesFromIntervalWhenAbsent) {
  auto config = parse_model_config(with(without(kFlat, "layer_types"), "num_hidden_layers", "8"));
  ASSERT_TRUE(config.ok()) << config.status().message();
  std::vector<LayerType> expected;
  for (int i = 0; i < 8; ++i) expected.push_back((i + 1) % 4 == 0 ? LayerType::full_attention : LayerType::linear_attention);
  EXPECT_EQ(config->text.layer_types, expected);
}

TEST(ModelConfig, AcceptsLegacyRopeScalingKeys) {
  std::string legacy = with(without(kFlat, "rope_parameters"), "rope_scaling", R"({"type":"default","mrope_section":[2,1,1]})");
  legacy = with(legacy, "rope_theta", "5000000.0");
  auto config = parse_model_config(legacy);
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_DOUBLE_EQ(config->text.rope.rope_theta, 5e6);
  EXPECT_EQ(config->text.rope.mrope_section, (std::vector<int64_t>{2, 1, 1}));
}

TEST(ModelConfig, TieWordEmbeddingsTopLevelWinsInNestedConfigs) {
  auto json = nlohmann::json::parse(test::read_file(DS_TEST_DATA_DIR "/qwen3.5-27b.config.json"));
  json["tie_word_embeddings"] = true;
  json["text_config"]["tie_word_embeddings"] = false;
  auto config = parse_model_config(json.dump());
  ASSERT_TRUE(config.ok());
  EXPECT_TRUE(config->tie_word_embeddings);
}

TEST(ModelConfig, RejectsBadJson) { EXPECT_ERROR_CONTAINS(parse_model_config("{\"model_type\": "), "config.json: not valid JSON"); }

TEST(ModelConfig, RejectsNonObject) { EXPECT_ERROR_CONTAINS(parse_model_config("[1]"), "expected a JSON object, found array"); }

TEST(ModelConfig, RejectsUnknownAndUnsupportedModelTypes) {
  EXPECT_ERROR_CONTAINS(parse_model_config(R"({"model_type":"llama"})"), "unknown model_type \"llama\"");
  EXPECT_ERROR_CONTAINS(parse_model_config(R"({"model_type":"qwen3_5_moe"})"), "MoE) is not supported yet");
  EXPECT_ERROR_CONTAINS(parse_model_config(R"({"vocab_size":5})"), "missing \"model_type\"");
}

TEST(ModelConfig, RejectsMissingFieldsNamingThem) {
  EXPECT_ERROR_CONTAINS(parse_model_config(without(kFlat, "hidden_size")), "config.json: hidden_size: missing");
  EXPECT_ERROR_CONTAINS(parse_model_config(R"({"model_type":"qwen3_5"})"), "text_config: missing (expected an object)");
}

TEST(ModelConfig, RejectsWrongTypesNamingPathAndValue) {
  EXPECT_ERROR_CONTAINS(parse_model_config(with(kFlat, "hidden_size", "\"big\"")),
                        "hidden_size: expected an integer, found string \"big\"");
  EXPECT_ERROR_CONTAINS(parse_model_config(with(kFlat, "hidden_size", "32.5")), "expected an integer, found number");
  auto nested = nlohmann::json::parse(test::read_file(DS_TEST_DATA_DIR "/qwen3.5-27b.config.json"));
  nested["text_config"]["num_key_value_heads"] = "four";
  EXPECT_ERROR_CONTAINS(parse_model_config(nested.dump()), "text_config.num_key_value_heads: expected an integer");
}

TEST(ModelConfig, RejectsOutOfRangeAndInconsistentShapes) {
  EXPECT_ERROR_CONTAINS(parse_model_config(with(kFlat, "hidden_size", "0")), "outside the supported range");
  EXPECT_ERROR_CONTAINS(parse_model_config(with(kFlat, "num_hidden_layers", "100000000000")), "outside the supported range");
  EXPECT_ERROR_CONTAINS(parse_model_config(with(kFlat, "num_key_value_heads", "3")), "is not a multiple of num_key_value_heads");
  EXPECT_ERROR_CONTAINS(parse_model_config(with(kFlat, "linear_num_value_heads", "6")), "is not a multiple of linear_num_key_heads");
  EXPECT_ERROR_CONTAINS(parse_model_config(with(kFlat, "layer_types", R"(["full_attention"])")),
                        "1 entries, expected num_hidden_layers = 2");
  EXPECT_ERROR_CONTAINS(parse_model_config(with(kFlat, "layer_types", R"(["full_attention","sliding"])")),
                        "unknown layer type \"sliding\"");
  EXPECT_ERROR_CONTAINS(parse_model_config(with(kFlat, "rope_parameters", R"({"rope_type":"yarn"})")),
                        "\"yarn\" is not supported yet");
  EXPECT_ERROR_CONTAINS(parse_model_config(with(kFlat, "rope_parameters", R"({"rope_type":"default","mrope_section":[3,1,1]})")),
                        "sections sum to 5, expected rotary_dim / 2 = 4");
  EXPECT_ERROR_CONTAINS(parse_model_config(with(kFlat, "hidden_act", "\"gelu\"")), "\"gelu\" is not supported");
  EXPECT_ERROR_CONTAINS(parse_model_config(with(kFlat, "rms_norm_eps", "-1")), "expected a finite number > 0");
}

TEST(ModelConfig, RejectsBadVisionConfig) {
  auto nested = nlohmann::json::parse(test::read_file(DS_TEST_DATA_DIR "/qwen3.5-27b.config.json"));
  nested["vision_config"]["num_position_embeddings"] = 2305;
  EXPECT_ERROR_CONTAINS(parse_model_config(nested.dump()), "2305 is not a perfect square");
}

TEST(ModelConfig, LoadReportsMissingFile) {
  test::TempDir dir;
  EXPECT_ERROR_CONTAINS(load_model_config(dir.path().string()), "a checkpoint directory needs config.json");
}

}  // namespace
}  // namespace ds
