// Block-FP8 checkpoints at the file level: quantization_config (block FP8 only; anything else refused
// by name), `make-checkpoint --dtype fp8` (Qwen's release layout: the bf16 checkpoint of the same seed,
// quantised; it loads and runs), and one named error per kind of broken FP8 file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "io/model_config.h"
#include "io/safetensors_checkpoint.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/formats/fp8/block_fp8.h"
#include "kernels/formats/fp8/fp8_quantize.h"
#include "micro_checkpoint.h"
#include "model/model_loader.h"
#include "model/qwen35_weights.h"
#include "model/sequence_runner.h"
#include "model/weight_spec.h"
#include "test_util.h"
#include "util/float16.h"

namespace ds {
namespace {

using test::EditableTensor;

nlohmann::json flat_config_with(const nlohmann::json& quantization) {
  nlohmann::json config = test::micro_config_json({.nested = false});
  config["quantization_config"] = quantization;
  return config;
}

const nlohmann::json kQwenFp8 = {{"activation_scheme", "dynamic"}, {"fmt", "e4m3"}, {"quant_method", "fp8"},
                                 {"weight_block_size", {128, 128}}, {"modules_to_not_convert", {"lm_head", "model.embed_tokens"}}};

TEST(QuantizationConfig, ReadsQwensBlockFp8Config) {
  auto config = parse_model_config(flat_config_with(kQwenFp8).dump());
  ASSERT_TRUE(config.ok()) << config.status().message();
  ASSERT_TRUE(config->quantization.has_value());
  EXPECT_EQ(config->quantization->quant_method, "fp8");
  EXPECT_EQ(config->quantization->modules_to_not_convert, (std::vector<std::string>{"lm_head", "model.embed_tokens"}));
  // Under text_config, and with transformers' defaults for what is left out (ignored_layers: its alias).
  nlohmann::json nested = test::micro_config_json({});
  nested["text_config"]["quantization_config"] = {{"quant_method", "fp8"}, {"ignored_layers", {"lm_head"}}};
  auto from_text = parse_model_config(nested.dump());
  ASSERT_TRUE(from_text.ok()) << from_text.status().message();
  ASSERT_TRUE(from_text->quantization.has_value());
  EXPECT_EQ(from_text->quantization->weight_block_size, (std::vector<int64_t>{128, 128}));
  EXPECT_EQ(from_text->quantization->modules_to_not_convert, std::vector<std::string>{"lm_head"});
  EXPECT_FALSE(parse_model_config(test::micro_config_json({}).dump())->quantization.has_value());
}

TEST(QuantizationConfig, RefusesWhatIsNotBlockFp8ByName) {
  auto with = [](const char* key, const nlohmann::json& value) {
    nlohmann::json q = kQwenFp8;
    if (value.is_discarded()) q.erase(key);
    else q[key] = value;
    return parse_model_config(flat_config_with(q).dump());
  };
  EXPECT_ERROR_CONTAINS(with("quant_method", "gptq"), "quantization_config.quant_method: \"gptq\" is not supported (supported: \"fp8\"");
  EXPECT_ERROR_CONTAINS(with("quant_method", nlohmann::json::value_t::discarded), "quantization_config.quant_method: missing");
  EXPECT_ERROR_CONTAINS(with("fmt", "e5m2"), "quantization_config.fmt: expected \"e4m3\" (F8_E4M3 weights), found \"e5m2\"");
  EXPECT_ERROR_CONTAINS(with("weight_block_size", {64, 64}), "weight_block_size: expected [128, 128], found [64, 64]");
  EXPECT_ERROR_CONTAINS(with("weight_block_size", nullptr), "expected [128, 128], found null (per-tensor FP8 is not supported)");
  EXPECT_ERROR_CONTAINS(with("activation_scheme", "static"), "activation_scheme: expected \"dynamic\", found \"static\"");
  EXPECT_ERROR_CONTAINS(with("scale_fmt", "ue8m0"), "scale_fmt: expected \"float\"");
  EXPECT_ERROR_CONTAINS(with("modules_to_not_convert", 3), "modules_to_not_convert");
}

// A block-FP8 micro checkpoint (released layout, vision, one MTP layer) beside the bf16 one of the same seed.
class Fp8Files : public ::testing::Test {
 protected:
  test::TempDir tmp_;
  std::string fp8_ = tmp_ / "fp8", bf16_ = tmp_ / "bf16";
  void SetUp() override {
    RandomCheckpointOptions fp8, bf16;
    fp8.dtype = DType::F8_E4M3;
    fp8.with_mtp = bf16.with_mtp = true;
    test::write_micro_checkpoint(fp8_, {}, fp8);
    test::write_micro_checkpoint(bf16_, {}, bf16);
  }
  std::string rewritten(const std::function<void(std::vector<EditableTensor>&)>& edit) {
    const std::string dst = tmp_ / "rewritten";
    test::rewrite_checkpoint(fp8_, dst, edit);
    return dst;
  }
  static Status bind(const std::string& dir) {
    auto config = load_model_config(dir);
    if (!config.ok()) return config.status();
    auto checkpoint = SafetensorsCheckpoint::open_dir(dir);
    if (!checkpoint.ok()) return checkpoint.status();
    return bind_qwen35_weights(*checkpoint, *config, nullptr).status();
  }
};

TEST_F(Fp8Files, MakeCheckpointWritesTheReleaseLayout) {
  auto config = load_model_config(fp8_);
  auto checkpoint = SafetensorsCheckpoint::open_dir(fp8_);
  ASSERT_TRUE(config.ok() && checkpoint.ok());
  ASSERT_TRUE(config->quantization.has_value());
  const auto& skipped = config->quantization->modules_to_not_convert;
  WeightTableOptions options;
  options.lm_head = false;  // tied
  options.vision = options.mtp = true;
  int fp8 = 0;
  for (const WeightSpec& spec : qwen35_weight_table(*config, options)) {
    const TensorView* view = checkpoint->find(spec.name);
    ASSERT_NE(view, nullptr) << spec.name;
    const std::string module = spec.name.substr(0, spec.name.rfind(".weight"));
    if (spec.block_fp8_in_release) {
      ++fp8;
      EXPECT_EQ(view->dtype, DType::F8_E4M3) << spec.name;
      const TensorView* scales = checkpoint->find(spec.name + "_scale_inv");
      ASSERT_NE(scales, nullptr) << spec.name;
      EXPECT_EQ(scales->dtype, DType::BF16);
      EXPECT_EQ(scales->shape, (std::vector<int64_t>{fp8_blocks(spec.shape[0]), fp8_blocks(spec.shape[1])}));
      EXPECT_EQ(std::count(skipped.begin(), skipped.end(), module), 0) << module;
    } else {
      EXPECT_EQ(view->dtype, DType::BF16) << spec.name << " (A_log and the gated norm too, as in Qwen3.6 FP8 files)";
    }
  }
  EXPECT_EQ(fp8, 3 * 6 + 7 + 7);  // 3 DeltaNet layers × (qkv, z, out + MLP), the attention layer, the MTP layer
  for (const char* module : {"model.language_model.embed_tokens", "model.language_model.layers.0.linear_attn.in_proj_a",
                             "model.language_model.layers.0.linear_attn.conv1d", "model.language_model.layers.0.linear_attn.A_log",
                             "model.language_model.layers.0.input_layernorm", "mtp.fc", "model.visual.blocks.0.attn.qkv"})
    EXPECT_EQ(std::count(skipped.begin(), skipped.end(), module), 1) << module;
}

// Codes and scales are the bf16 checkpoint's weights through Fp8Quantize's rule, the scales in BF16.
TEST_F(Fp8Files, CodesAreTheBf16CheckpointQuantised) {
  auto fp8 = SafetensorsCheckpoint::open_dir(fp8_);
  auto bf16 = SafetensorsCheckpoint::open_dir(bf16_);
  ASSERT_TRUE(fp8.ok() && bf16.ok());
  int checked = 0;
  for (const auto& [name, codes] : fp8->tensors()) {
    if (codes.dtype != DType::F8_E4M3) continue;
    const TensorView* source = bf16->find(name);
    ASSERT_NE(source, nullptr) << name;
    const int64_t n = codes.shape[0], k = codes.shape[1];
    std::vector<float> rows(static_cast<size_t>(n * k));
    for (int64_t i = 0; i < n * k; ++i) {
      uint16_t bits;
      std::memcpy(&bits, source->data + 2 * i, 2);
      rows[i] = bf16_to_float(bits);
    }
    std::vector<uint8_t> want(static_cast<size_t>(n * k));
    std::vector<float> inverse(static_cast<size_t>(fp8_blocks(n) * fp8_blocks(k)));
    for (int64_t b = 0; b < fp8_blocks(n); ++b)
      fp8_quantize_block_row(rows.data() + b * kFp8Block * k, std::min(kFp8Block, n - b * kFp8Block), k,
                             want.data() + b * kFp8Block * k, inverse.data() + b * fp8_blocks(k));
    EXPECT_EQ(0, std::memcmp(want.data(), codes.data, want.size())) << name;
    const TensorView* scales = fp8->find(name + "_scale_inv");
    for (size_t i = 0; i < inverse.size(); ++i) {
      uint16_t bits;
      std::memcpy(&bits, scales->data + 2 * i, 2);
      ASSERT_EQ(bits, float_to_bf16(inverse[i])) << name << " scale " << i;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 32);
}

TEST_F(Fp8Files, LoadsAndRunsLikeItsBf16Source) {
  CpuBackend backend(detect_isa(), 2);
  const std::vector<int32_t> tokens = test::random_tokens(20, 512, 4);
  std::vector<std::vector<float>> logits;
  for (const std::string& dir : {fp8_, bf16_}) {
    auto loaded = load_model(dir, backend, ComputeMode::fast);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    SequenceRunner runner(*loaded->model, 20, 20);
    logits.emplace_back();
    ASSERT_TRUE(runner.feed(tokens, LogitsRows::all, logits.back()).ok());
  }
  double max_ref = 0, max_diff = 0;
  for (size_t i = 0; i < logits[0].size(); ++i) {
    ASSERT_TRUE(std::isfinite(logits[0][i]));
    max_ref = std::max(max_ref, double(std::fabs(logits[1][i])));
    max_diff = std::max(max_diff, double(std::fabs(logits[0][i] - logits[1][i])));
  }
  // e4m3 keeps 4 significant bits: the micro model's logits move by a few percent of their largest.
  EXPECT_LT(max_diff, 0.1 * max_ref);
}

TEST_F(Fp8Files, Fp8WeightWithoutItsScaleIsNamed) {
  const std::string dir = rewritten([](std::vector<EditableTensor>& tensors) {
    std::erase_if(tensors, [](const EditableTensor& t) {
      return t.decl.name == "model.language_model.layers.0.mlp.gate_proj.weight_scale_inv";
    });
  });
  const Status status = bind(dir);
  EXPECT_NE(status.message().find("tensor \"model.language_model.layers.0.mlp.gate_proj.weight\": F8_E4M3 without "
                                  "\"model.language_model.layers.0.mlp.gate_proj.weight_scale_inv\""),
            std::string::npos)
      << status.message();
}

TEST_F(Fp8Files, ScaleOfTheWrongShapeOrDtypeIsNamed) {
  const std::string scale = "model.language_model.layers.0.mlp.down_proj.weight_scale_inv";
  const Status shape = bind(rewritten([&](std::vector<EditableTensor>& tensors) {
    for (EditableTensor& t : tensors)
      if (t.decl.name == scale) {
        t.decl.shape = {1, 2};
        t.bytes += t.bytes;
      }
  }));
  EXPECT_NE(shape.message().find("tensor \"" + scale + "\": expected shape [1, 1] (one scale per 128 × 128 block of [64, 96]), found [1, 2]"),
            std::string::npos)
      << shape.message();
  const Status dtype = bind(rewritten([&](std::vector<EditableTensor>& tensors) {
    for (EditableTensor& t : tensors)
      if (t.decl.name == scale) t.decl.dtype = DType::I16;
  }));
  EXPECT_NE(dtype.message().find("tensor \"" + scale + "\": expected dtype BF16, F16 or F32, found I16"), std::string::npos)
      << dtype.message();
}

TEST_F(Fp8Files, ScaleWithoutAnFp8WeightIsNamed) {
  const Status status = bind(rewritten([](std::vector<EditableTensor>& tensors) {
    tensors.push_back({TensorDecl{"model.language_model.layers.0.linear_attn.in_proj_a.weight_scale_inv", DType::BF16, {1, 1}},
                       std::string(2, '\0')});
    tensors.push_back({TensorDecl{"model.language_model.layers.0.foo.weight_scale_inv", DType::BF16, {1, 1}}, std::string(2, '\0')});
  }));
  EXPECT_NE(status.message().find("a weight_scale_inv beside \"model.language_model.layers.0.linear_attn.in_proj_a.weight\", "
                                  "which is BF16 (expected F8_E4M3 codes)"),
            std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("a weight_scale_inv without its weight \"model.language_model.layers.0.foo.weight\""),
            std::string::npos)
      << status.message();
}

TEST_F(Fp8Files, E5m2WeightIsRefused) {
  const Status status = bind(rewritten([](std::vector<EditableTensor>& tensors) {
    for (EditableTensor& t : tensors)
      if (t.decl.name == "model.language_model.layers.0.mlp.up_proj.weight") t.decl.dtype = DType::F8_E5M2;
  }));
  EXPECT_NE(status.message().find("tensor \"model.language_model.layers.0.mlp.up_proj.weight\": F8_E5M2 is not supported"),
            std::string::npos)
      << status.message();
}

// Block FP8 on the embedding (no release has it) is read through its values, a row per token; on the
// tied head as well. Tensors that are not 2-D — norms, conv taps, A_log, dt_bias — cannot be block FP8.
TEST_F(Fp8Files, Fp8EmbeddingIsReadThroughItsValues) {
  const std::string name = "model.language_model.embed_tokens.weight";
  const std::string dir = rewritten([&](std::vector<EditableTensor>& tensors) {
    for (EditableTensor& t : tensors)
      if (t.decl.name == name) {
        const int64_t n = t.decl.shape[0], k = t.decl.shape[1];
        std::vector<float> rows(static_cast<size_t>(n * k));
        for (int64_t i = 0; i < n * k; ++i) {
          uint16_t bits;
          std::memcpy(&bits, t.bytes.data() + 2 * i, 2);
          rows[i] = bf16_to_float(bits);
        }
        std::string codes(static_cast<size_t>(n * k), '\0'), scales(static_cast<size_t>(2 * fp8_blocks(n)), '\0');
        for (int64_t b = 0; b < fp8_blocks(n); ++b) {
          float inverse;
          fp8_quantize_block_row(rows.data() + b * kFp8Block * k, std::min(kFp8Block, n - b * kFp8Block), k,
                                 reinterpret_cast<uint8_t*>(codes.data()) + b * kFp8Block * k, &inverse);
          const uint16_t bits = float_to_bf16(inverse);
          std::memcpy(scales.data() + 2 * b, &bits, 2);
        }
        t.decl.dtype = DType::F8_E4M3;
        t.bytes = codes;
        tensors.push_back({TensorDecl{name + "_scale_inv", DType::BF16, {fp8_blocks(n), 1}}, scales});
        break;
      }
  });
  CpuBackend backend(detect_isa(), 2);
  auto loaded = load_model(dir, backend, ComputeMode::fast);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  SequenceRunner runner(*loaded->model, 8, 8);
  std::vector<float> logits;
  ASSERT_TRUE(runner.feed(test::random_tokens(8, 512, 5), LogitsRows::all, logits).ok());
  for (float v : logits) ASSERT_TRUE(std::isfinite(v));
  const Status norm = bind(rewritten([](std::vector<EditableTensor>& tensors) {
    for (EditableTensor& t : tensors)
      if (t.decl.name == "model.language_model.layers.0.input_layernorm.weight") {
        t.decl.dtype = DType::F8_E4M3;
        t.bytes.resize(t.bytes.size() / 2);
      }
    tensors.push_back({TensorDecl{"model.language_model.layers.0.input_layernorm.weight_scale_inv", DType::BF16, {1}},
                       std::string(2, '\0')});
  }));
  EXPECT_NE(norm.message().find("tensor \"model.language_model.layers.0.input_layernorm.weight\": block-FP8 weights are "
                                "2-D [out, in], found shape [64]"),
            std::string::npos)
      << norm.message();
}

TEST_F(Fp8Files, Fp8TensorsNeedAQuantizationConfig) {
  auto config = nlohmann::json::parse(test::read_file(fp8_ + "/config.json"));
  config.erase("quantization_config");
  test::write_file(fp8_ + "/config.json", config.dump());
  const Status status = bind(fp8_);
  EXPECT_NE(status.message().find("is F8_E4M3, but config.json has no quantization_config"), std::string::npos)
      << status.message();
}

}  // namespace
}  // namespace ds
