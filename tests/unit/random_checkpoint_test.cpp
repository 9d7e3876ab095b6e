// Random checkpoints: determinism whatever the thread count, Qwen3.5's fp32 tensors, value ranges
// of the randomised constants, atomic output directory, presets that parse.
#include "model/random_checkpoint.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "io/model_config.h"
#include "io/safetensors_checkpoint.h"
#include "micro_checkpoint.h"
#include "model/shape_presets.h"
#include "model/weight_spec.h"
#include "vision/preprocessor_config.h"
#include "test_util.h"
#include "util/float16.h"

namespace ds {
namespace {

namespace fs = std::filesystem;

std::vector<float> as_floats(const TensorView& view) {
  std::vector<float> values(view.numel());
  for (size_t i = 0; i < values.size(); ++i) {
    if (view.dtype == DType::F32) {
      std::memcpy(&values[i], view.data + 4 * i, 4);
    } else {
      uint16_t bits;
      std::memcpy(&bits, view.data + 2 * i, 2);
      values[i] = view.dtype == DType::BF16 ? bf16_to_float(bits) : fp16_to_float(bits);
    }
  }
  return values;
}

TEST(RandomCheckpoint, SameSeedSameBytesWhateverTheThreadCount) {
  test::TempDir tmp;
  RandomCheckpointOptions one, two, other_seed;
  one.threads = 1;
  two.threads = 2;
  other_seed.seed = 7;
  test::write_micro_checkpoint(tmp / "a", {}, one);
  test::write_micro_checkpoint(tmp / "b", {}, two);
  test::write_micro_checkpoint(tmp / "c", {}, other_seed);
  const std::string a = test::read_file(tmp / "a/model.safetensors");
  EXPECT_EQ(a, test::read_file(tmp / "b/model.safetensors"));
  EXPECT_NE(a, test::read_file(tmp / "c/model.safetensors"));
}

TEST(RandomCheckpoint, WritesHfLayoutFilesAndNoPartialDirectory) {
  test::TempDir tmp;
  test::write_micro_checkpoint(tmp / "m", {});
  for (const char* name : {"config.json", "generation_config.json", "model.safetensors", "tokenizer.json",
                           "tokenizer_config.json", "chat_template.jinja"})
    EXPECT_TRUE(fs::exists(fs::path(tmp / "m") / name)) << name;
  EXPECT_FALSE(fs::exists(tmp / "m.partial"));
  EXPECT_TRUE(load_model_config(tmp / "m").ok());
  // A released layout has a vision tower: its preprocessor file as released (patch 16, merge 2, 256² .. 4096² pixels).
  auto preprocessor = load_preprocessor_config(tmp / "m");
  ASSERT_TRUE(preprocessor.ok()) << preprocessor.status().message();
  EXPECT_EQ(preprocessor->patch_size, 16);
  EXPECT_EQ(preprocessor->min_pixels, 65536);
  EXPECT_EQ(preprocessor->max_pixels, 16777216);
  test::MicroOptions flat;
  flat.nested = false;
  test::write_micro_checkpoint(tmp / "flat", flat);
  EXPECT_FALSE(fs::exists(fs::path(tmp / "flat") / "preprocessor_config.json")) << "a text-only save has no tower";
}

TEST(RandomCheckpoint, RefusesNonEmptyDirectoryUnlessForced) {
  test::TempDir tmp;
  test::write_micro_checkpoint(tmp / "m", {});
  RandomCheckpointOptions options;
  options.out_dir = tmp / "m";
  const Status again = write_random_checkpoint(test::micro_config_json({}), options, test::micro_assets());
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.message().find("--force"), std::string::npos);
  options.force = true;
  EXPECT_TRUE(write_random_checkpoint(test::micro_config_json({}), options, test::micro_assets()).ok());
}

TEST(RandomCheckpoint, KeepsQwen35Fp32TensorsAndRandomisesConstants) {
  test::TempDir tmp;
  test::write_micro_checkpoint(tmp / "m", {});
  auto checkpoint = SafetensorsCheckpoint::open_dir(tmp / "m");
  ASSERT_TRUE(checkpoint.ok());
  int f32 = 0;
  for (const auto& [name, view] : checkpoint->tensors()) {
    if (view.dtype != DType::F32) continue;
    ++f32;
    EXPECT_TRUE(name.ends_with("linear_attn.A_log") || name.ends_with("linear_attn.norm.weight")) << name;
  }
  EXPECT_EQ(f32, 2 * 3);  // two per linear-attention layer
  const auto a_log = as_floats(*checkpoint->find("model.language_model.layers.0.linear_attn.A_log"));
  for (float value : a_log) EXPECT_TRUE(value >= 0.0f && value <= std::log(16.0f)) << value;
  const auto norm = as_floats(*checkpoint->find("model.language_model.layers.0.linear_attn.norm.weight"));
  float spread = 0;
  for (float value : norm) spread = std::max(spread, std::fabs(value - 1.0f));
  EXPECT_GT(spread, 0.01f) << "gated-norm weight must not be HF's constant 1";
  const auto embed = as_floats(*checkpoint->find("model.language_model.embed_tokens.weight"));
  double sum = 0, sum_sq = 0;
  for (float value : embed) {
    sum += value;
    sum_sq += double(value) * value;
  }
  const double mean = sum / embed.size(), stddev = std::sqrt(sum_sq / embed.size() - mean * mean);
  EXPECT_NEAR(mean, 0.0, 1e-3);
  EXPECT_NEAR(stddev, 0.02, 1e-3);
}

TEST(ShapePresets, AllPresetsProduceValidConfigsOfTheRealShapes) {
  for (const ShapePreset& preset : shape_presets()) {
    for (bool text_only : {false, true}) {
      auto config = parse_model_config(preset_config_json(preset, text_only, "bfloat16").dump());
      ASSERT_TRUE(config.ok()) << preset.name << ": " << config.status().message();
      EXPECT_EQ(config->text.vocab_size, 248320);
      EXPECT_EQ(config->text.head_dim, 256);
      EXPECT_EQ(config->text.linear_key_head_dim, 128);
      EXPECT_EQ(config->text.rotary_dim(), 64);
      EXPECT_EQ(config->vision.has_value(), !text_only);
    }
  }
  // Against the released 27B config (spec §1.3: Qwen3.5-27B = Qwen3.6-27B values).
  auto real = parse_model_config(test::read_file(DS_TEST_DATA_DIR "/qwen3.5-27b.config.json"));
  auto ours = parse_model_config(preset_config_json(*find_shape_preset("27b"), false, "bfloat16").dump());
  ASSERT_TRUE(real.ok() && ours.ok());
  EXPECT_EQ(ours->text.layer_types, real->text.layer_types);
  EXPECT_EQ(ours->text.conv_dim(), real->text.conv_dim());
  EXPECT_EQ(ours->text.intermediate_size, real->text.intermediate_size);
  EXPECT_EQ(ours->text.num_attention_heads, real->text.num_attention_heads);
  EXPECT_EQ(ours->tie_word_embeddings, real->tie_word_embeddings);
  EXPECT_EQ(ours->vision->depth, real->vision->depth);
  EXPECT_EQ(ours->vision->intermediate_size, real->vision->intermediate_size);
  EXPECT_FALSE(find_shape_preset("70b").ok());
}

// --with-mtp at every shape: the head's 15 tensors (one layer, as released), of the preset's dimensions.
TEST(ShapePresets, EveryPresetWritesTheMtpHead) {
  for (const ShapePreset& preset : shape_presets()) {
    auto config = parse_model_config(preset_config_json(preset, false, "bfloat16").dump());
    ASSERT_TRUE(config.ok()) << preset.name << ": " << config.status().message();
    EXPECT_EQ(config->text.mtp_num_hidden_layers, 1) << preset.name;
    WeightTableOptions options;
    options.mtp = true;
    std::vector<WeightSpec> mtp;
    for (const WeightSpec& spec : qwen35_weight_table(*config, options))
      if (spec.part == WeightPart::mtp) mtp.push_back(spec);
    const int64_t H = config->text.hidden_size;
    ASSERT_EQ(mtp.size(), 15u) << preset.name;
    for (const WeightSpec& spec : mtp) {
      if (spec.name == "mtp.fc.weight") {
        EXPECT_EQ(spec.shape, (std::vector<int64_t>{H, 2 * H})) << preset.name;
      }
      if (spec.name == "mtp.layers.0.mlp.gate_proj.weight") {
        EXPECT_EQ(spec.shape, (std::vector<int64_t>{config->text.intermediate_size, H})) << preset.name;
      }
    }
  }
}

TEST(RandomCheckpoint, WithMtpWritesTheHeadWithItsInitialisation) {
  test::TempDir tmp;
  RandomCheckpointOptions writer;
  writer.with_mtp = true;
  test::write_micro_checkpoint(tmp / "m", {}, writer);
  auto checkpoint = SafetensorsCheckpoint::open_dir(tmp / "m");
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().message();
  int mtp = 0;
  for (const auto& [name, view] : checkpoint->tensors())
    if (name.rfind("mtp.", 0) == 0) {
      ++mtp;
      EXPECT_EQ(view.dtype, DType::BF16) << name;
    }
  EXPECT_EQ(mtp, 15);
  // Zero-centred norms are randomised around 0 (applied as 1 + w), matrices N(0, 0.02).
  const std::vector<float> norm = as_floats(*checkpoint->find("mtp.pre_fc_norm_hidden.weight"));
  const std::vector<float> fc = as_floats(*checkpoint->find("mtp.fc.weight"));
  double norm_sq = 0, fc_sq = 0;
  for (float v : norm) norm_sq += double(v) * v;
  for (float v : fc) fc_sq += double(v) * v;
  EXPECT_NEAR(std::sqrt(norm_sq / norm.size()), 0.1, 0.03);
  EXPECT_NEAR(std::sqrt(fc_sq / fc.size()), 0.02, 0.002);
}

}  // namespace
}  // namespace ds
