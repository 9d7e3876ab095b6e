// deltaserve's GGUF writer (model/gguf_export.h, make-checkpoint --out FILE.gguf) against llama.cpp's
// converter and against the safetensors model it writes:
// - the HF fixtures exported to BF16 / F32 / Q8_0 give the files convert_hf_to_gguf.py made of them
//   (tests/fixtures/gguf): the same tensors, shapes, types and bytes, the same qwen35.* and
//   tokenizer.* metadata (with the MTP head: its nextn block and keys too);
// - a random GGUF is the random safetensors model of the same seed: BF16 and F32 give its logits
//   bit for bit; the quantised file types stay within their quantisation's error of it; the bytes
//   depend on the seed only, not on the thread count; the tensor types are llama-quantize's mixes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "io/gguf_set.h"
#include "io/safetensors_checkpoint.h"
#include "kernels/ref/ref_backend.h"
#include "kernels/weight_access.h"
#include "micro_checkpoint.h"
#include "model_logits.h"
#include "model/gguf_export.h"
#include "model/model_loader.h"
#include "model/random_checkpoint.h"
#include "test_util.h"
#include "tokenizer/gguf_tokenizer.h"

namespace ds::gguf_export_test {
namespace {

namespace fs = std::filesystem;
const fs::path kFixtures(DS_FIXTURES_DIR);
const fs::path kHfTokenizer = kFixtures / "gguf" / "hf_tokenizer";

// The fixtures' tokenizer (vocabulary 512, the Qwen3.5 pre-tokenizer) with its chat template.
TokenizerAssets fixture_assets() {
  const std::string config = test::read_file((kHfTokenizer / "tokenizer_config.json").string());
  return {test::read_file((kHfTokenizer / "tokenizer.json").string()), config,
          nlohmann::json::parse(config)["chat_template"].get<std::string>()};
}

// ---- against llama.cpp's converter ---------------------------------------------------------------

bool same_value(const GgufEntry& a, const GgufEntry& b) {
  if (a.type != b.type || a.element_type != b.element_type || a.count != b.count || a.strings != b.strings) return false;
  return std::equal(a.numbers.begin(), a.numbers.end(), b.numbers.begin(), b.numbers.end());
}

void expect_converter_file(const std::string& fixture, const std::string& converted, GgufFileType file_type) {
  SCOPED_TRACE(converted);
  const std::string dir = (kFixtures / fixture).string();
  auto config = load_model_config(dir);
  ASSERT_TRUE(config.ok()) << config.status().message();
  auto checkpoint = SafetensorsCheckpoint::open_dir(dir);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().message();
  WeightTableOptions table_options;
  table_options.text_prefix = config->nested ? kNestedTextPrefix : kFlatTextPrefix;
  table_options.lm_head = !config->tie_word_embeddings;
  for (const auto& [name, _] : checkpoint->tensors()) table_options.mtp = table_options.mtp || name.starts_with(kMtpPrefix);
  const std::vector<WeightSpec> table = qwen35_weight_table(*config, table_options);

  test::TempDir tmp;
  GgufExportOptions options;
  options.path = tmp / "ours.gguf";
  options.file_type = file_type;
  options.threads = 2;
  const bool fixture_tokenizer = config->text.vocab_size == 512;  // the fixtures of vocabulary 512 share hf_tokenizer
  if (fixture_tokenizer) {
    const TokenizerAssets assets = fixture_assets();
    ASSERT_TRUE(set_gguf_tokenizer(assets.tokenizer_json, assets.tokenizer_config_json, assets.chat_template, 512,
                                   options.metadata).ok());
  }
  auto source = [&](const WeightSpec& spec, uint64_t begin, uint64_t end, float* out) {
    weight_span(*checkpoint->find(spec.name), static_cast<int64_t>(begin), static_cast<int64_t>(end - begin), out);
  };
  const Status written = write_gguf(*config, table, table_options.text_prefix, source, options);
  ASSERT_TRUE(written.ok()) << written.message();

  auto ours = GgufSet::open(options.path);
  auto theirs = GgufSet::open((kFixtures / "gguf" / converted).string());
  ASSERT_TRUE(ours.ok()) << ours.status().message();
  ASSERT_TRUE(theirs.ok()) << theirs.status().message();
  ASSERT_EQ(ours->tensors().size(), theirs->tensors().size());
  for (const GgufSetTensor& want : theirs->tensors()) {
    const std::string name(want.info->name);
    const GgufSetTensor* got = ours->tensor(name);
    ASSERT_NE(got, nullptr) << name;
    EXPECT_EQ(got->info->shape, want.info->shape) << name;
    ASSERT_EQ(got->info->type.id, want.info->type.id) << name << ": " << got->info->type.name << " vs " << want.info->type.name;
    ASSERT_EQ(got->info->bytes, want.info->bytes) << name;
    EXPECT_EQ(std::memcmp(got->data(), want.data(), want.info->bytes), 0) << name << ": bytes differ from the converter's";
  }
  // Every key the converter wrote, the same type and value; general.name and the size label
  // describe the source directory, split.* the split.
  size_t keys = 0;
  for (const GgufEntry& want : theirs->metadata().metadata) {
    if (want.key == "general.name" || want.key == "general.size_label" || want.key.starts_with("split.")) continue;
    if (!fixture_tokenizer && want.key.starts_with("tokenizer.")) continue;
    const GgufEntry* got = ours->metadata().find(want.key);
    ASSERT_NE(got, nullptr) << want.key;
    EXPECT_TRUE(same_value(*got, want)) << want.key;
    ++keys;
  }
  EXPECT_EQ(keys, theirs->metadata().metadata.size() - (fixture_tokenizer ? 2 : 11));  // all but those skipped
}

TEST(GgufExport, WritesTheFilesLlamaCppsConverterWrites) {
  expect_converter_file("c_bf16_untied", "c_bf16_untied-BF16.gguf", GgufFileType::bf16);     // nV = 3 nK
  expect_converter_file("d_text_only", "d_text_only-F32.gguf", GgufFileType::f32);           // nV = 2 nK, text-only
  expect_converter_file("e_real_head_sizes", "e_real_head_sizes-Q8_0.gguf", GgufFileType::q8_0);  // tied
  // With the MTP head: its nextn block 3, block_count 4, nextn_predict_layers 1, recurrent_layers of 4.
  expect_converter_file("mtp/mtp_b_bf16_untied", "mtp_b_bf16_untied-BF16.gguf", GgufFileType::bf16);
}

// ---- random models: the GGUF against the safetensors checkpoint of the same seed ------------------

struct Written {
  test::TempDir tmp;
  std::string safetensors;
  std::string gguf(GgufFileType type) const { return tmp / (std::string(gguf_file_type_name(type)) + ".gguf"); }
};

RandomCheckpointOptions random_options(bool visible_text) {
  RandomCheckpointOptions options;
  options.seed = 5;
  options.threads = 2;
  options.visible_text = visible_text;
  return options;
}

void write_random_pair(Written& w, const test::MicroOptions& micro, bool visible_text, std::initializer_list<GgufFileType> types,
                       DType dtype = DType::BF16) {
  RandomCheckpointOptions options = random_options(visible_text);
  options.dtype = dtype;
  options.out_dir = w.safetensors = w.tmp / "safetensors";
  ASSERT_TRUE(write_random_checkpoint(test::micro_config_json(micro), options, fixture_assets()).ok());
  for (GgufFileType type : types) {
    const Status status = write_random_gguf(test::micro_config_json(micro), options, w.gguf(type), type, fixture_assets());
    ASSERT_TRUE(status.ok()) << status.message();
  }
}

using test::all_logits;
using test::worst_error;

const std::vector<std::vector<int32_t>> kPrompts = {test::random_tokens(9, 500, 1), test::random_tokens(17, 500, 2)};

// BF16 against the bf16 checkpoint, F32 against the f32 one (`--dtype f32`): the weights the model
// computes with are then the same in every mode (fast mode repacks bf16 weights into bf16 panels and
// keeps f32 ones f32, so an F32 file of bf16 values is the bf16 model only in f32 mode).
TEST(RandomGguf, Bf16AndF32FilesGiveTheSafetensorsLogitsBitForBit) {
  for (bool tied : {false, true})
    for (auto [type, dtype] : {std::pair{GgufFileType::bf16, DType::BF16}, std::pair{GgufFileType::f32, DType::F32}}) {
      Written w;
      write_random_pair(w, {.tied = tied, .block_sized = true}, /*visible_text=*/true, {type}, dtype);
      for (const auto& backend : test::logit_backends())
        for (ComputeMode mode : {ComputeMode::f32, ComputeMode::fast})
          for (WeightsChoice choice : {WeightsChoice::native, WeightsChoice::mapped}) {
          auto original = load_model(w.safetensors, *backend, mode, choice);
          auto gguf = load_model(w.gguf(type), *backend, mode, choice);
          ASSERT_TRUE(original.ok()) << original.status().message();
          ASSERT_TRUE(gguf.ok()) << gguf.status().message();
          for (const auto& prompt : kPrompts) {
            const std::vector<float> want = all_logits(*original->model, prompt), got = all_logits(*gguf->model, prompt);
            ASSERT_EQ(got.size(), want.size());
            EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * 4), 0)
                << gguf_file_type_name(type) << (tied ? " tied" : " untied") << " [" << backend->name() << "] mode "
                << static_cast<int>(mode) << ": logits differ from the safetensors model's";
          }
        }
    }
}

// Quantised files against the bf16 original, fp32 reference backend (the quantisation's error alone),
// beside the project's own load-time quantisation of the same values, which rounds the same groups:
// Q8_0 next to `--weights int8` (symmetric, 32 inputs per scale), Q4_K_M next to `--weights q4_k`
// (Q4_K, the head Q6_K). Without the visible-text edits: their ±1 column read by a 1000× final norm
// turns any rounding of the head into logit differences far above the model's own spread.
// Q4_K_M also stores the embedding table in Q4_K, which --weights q4_k leaves bf16: hence its
// bound of 2 × q4_k's. Measured (untied, 2 prompts): F16 1.7e-6, Q8_0 0.110, Q6_K 0.193, Q5_K_M
// 0.395, Q4_K_M 1.27; --weights int8 0.083, --weights q4_k 0.783 (the logits of a random micro
// model are small, so its 4-bit error is of their size).
TEST(RandomGguf, QuantisedFilesStayWithinTheirQuantisationsError) {
  Written w;
  const std::initializer_list<GgufFileType> types = {GgufFileType::f16, GgufFileType::q8_0, GgufFileType::q6_k,
                                                     GgufFileType::q5_k_m, GgufFileType::q4_k_m};
  write_random_pair(w, {.tied = false, .block_sized = true}, /*visible_text=*/false, types);
  RefBackend ref;
  auto original = load_model(w.safetensors, ref, ComputeMode::f32);
  ASSERT_TRUE(original.ok());
  const int64_t vocab = original->config.text.vocab_size;
  auto error_of = [&](const std::string& path, WeightsChoice choice) {
    auto model = load_model(path, ref, ComputeMode::f32, choice);
    EXPECT_TRUE(model.ok()) << model.status().message();
    double worst = 0;
    for (const auto& prompt : kPrompts)
      worst = std::max(worst, worst_error(all_logits(*model->model, prompt), all_logits(*original->model, prompt), vocab));
    return worst;
  };
  std::map<GgufFileType, double> error;
  for (GgufFileType type : types) {
    error[type] = error_of(w.gguf(type), WeightsChoice::native);
    std::cout << gguf_file_type_name(type) << ": error " << error[type] << "\n";
  }
  const double int8 = error_of(w.safetensors, WeightsChoice::int8), q4_k = error_of(w.safetensors, WeightsChoice::q4_k);
  std::cout << "--weights int8: " << int8 << ", --weights q4_k: " << q4_k << "\n";
  EXPECT_LE(error[GgufFileType::f16], 1e-3);
  EXPECT_LE(error[GgufFileType::q8_0], 2 * int8);
  EXPECT_LE(error[GgufFileType::q4_k_m], 2 * q4_k);
  // More bits, less error.
  EXPECT_LT(error[GgufFileType::f16], error[GgufFileType::q8_0]);
  EXPECT_LT(error[GgufFileType::q8_0], error[GgufFileType::q6_k]);
  EXPECT_LT(error[GgufFileType::q6_k], error[GgufFileType::q4_k_m]);
  EXPECT_LE(error[GgufFileType::q5_k_m], error[GgufFileType::q4_k_m]);
}

TEST(RandomGguf, SameSeedSameBytesWhateverTheThreadCount) {
  test::TempDir tmp;
  const auto config = test::micro_config_json({.block_sized = true});
  RandomCheckpointOptions options = random_options(true);
  auto write = [&](const std::string& name, int threads, uint64_t seed) {
    options.threads = threads;
    options.seed = seed;
    const Status status = write_random_gguf(config, options, tmp / name, GgufFileType::q4_k_m, fixture_assets());
    EXPECT_TRUE(status.ok()) << status.message();
    return test::read_file(tmp / name);
  };
  const std::string one = write("one.gguf", 1, 5);
  EXPECT_EQ(one, write("three.gguf", 3, 5));
  EXPECT_NE(one, write("other.gguf", 2, 6));
}

// The per-tensor types of llama-quantize's mixes (gguf_file_type.h), in the written file.
TEST(RandomGguf, TensorTypesAreLlamaQuantizesMix) {
  Written w;
  write_random_pair(w, {.tied = false, .layers = 8, .block_sized = true}, true,
                    {GgufFileType::q4_k_m, GgufFileType::q5_k_m, GgufFileType::q6_k, GgufFileType::q8_0});
  // use_more_bits(i, 8): i < 1, i ≥ 7, (i − 1) % 3 == 2 → layers 0, 3, 6, 7.
  auto more_bits = [](int64_t layer) { return layer == 0 || layer == 3 || layer == 6 || layer == 7; };
  for (auto [file_type, base, more, llama_ftype] :
       {std::tuple{GgufFileType::q4_k_m, "Q4_K", "Q6_K", 15}, std::tuple{GgufFileType::q5_k_m, "Q5_K", "Q6_K", 17},
        std::tuple{GgufFileType::q6_k, "Q6_K", "Q6_K", 18}, std::tuple{GgufFileType::q8_0, "Q8_0", "Q8_0", 7}}) {
    auto set = GgufSet::open(w.gguf(file_type));
    ASSERT_TRUE(set.ok()) << set.status().message();
    EXPECT_EQ(*set->metadata().find("general.file_type")->integer(), llama_ftype);
    const bool k_mix = file_type != GgufFileType::q8_0;
    for (const GgufSetTensor& t : set->tensors()) {
      const std::string name(t.info->name);
      std::string want = base;
      const int64_t layer = name.starts_with("blk.") ? std::stoll(name.substr(4)) : -1;
      if (t.info->shape.size() == 1 || name.ends_with("_norm.weight") || name.ends_with("ssm_conv1d.weight") ||
          !name.ends_with(".weight"))
        want = "F32";
      else if (name == "output.weight")
        want = k_mix ? "Q6_K" : "Q8_0";
      else if ((name.ends_with("attn_qkv.weight") || name.ends_with("attn_v.weight") || name.ends_with("ffn_down.weight")) &&
               more_bits(layer))
        want = more;
      EXPECT_EQ(t.info->type.name, want) << gguf_file_type_name(file_type) << ": " << name;
    }
  }
}

// At the real shapes: the 27B's Q4_K_M gives 32 of its 64 layers Q6_K attn_qkv / attn_v and ffn_down,
// as llama.cpp's does.
TEST(RandomGguf, Qwen36_27bQ4_K_MHasLlamaCppsQ6_KLayers) {
  int64_t q6_k = 0;
  for (int64_t layer = 0; layer < 64; ++layer) {
    const GgufTensorName down{"blk." + std::to_string(layer) + ".ffn_down.weight", "", GgufConversion::none, layer};
    const int64_t shape[] = {17408, 5120};
    q6_k += std::string(gguf_tensor_type(GgufFileType::q4_k_m, down, shape, 64, false).name) == "Q6_K";
  }
  EXPECT_EQ(q6_k, 32);
}

TEST(RandomGguf, RefusesWhatItCannotWrite) {
  test::TempDir tmp;
  const auto config = test::micro_config_json({.block_sized = true});
  RandomCheckpointOptions options = random_options(true);
  Status status = write_random_gguf(config, options, tmp / "m.gguf", GgufFileType::bf16, test::micro_assets());
  EXPECT_NE(status.message().find("a GGUF needs a BPE tokenizer"), std::string::npos) << status.message();
  ASSERT_TRUE(write_random_gguf(config, options, tmp / "m.gguf", GgufFileType::bf16, fixture_assets()).ok());
  status = write_random_gguf(config, options, tmp / "m.gguf", GgufFileType::bf16, fixture_assets());
  EXPECT_NE(status.message().find("already exists (use --force"), std::string::npos) << status.message();
  options.force = true;
  EXPECT_TRUE(write_random_gguf(config, options, tmp / "m.gguf", GgufFileType::q8_0, fixture_assets()).ok());
  // Rows that are not whole blocks fall back: Q8_0 where K-quants do not fit, F16 where Q8_0 does not.
  status = write_random_gguf(test::micro_config_json({}), options, tmp / "small.gguf", GgufFileType::q4_k_m, fixture_assets());
  ASSERT_TRUE(status.ok()) << status.message();
  auto set = GgufSet::open(tmp / "small.gguf");
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(std::string(set->tensor("blk.0.ffn_down.weight")->info->type.name), "Q8_0");  // 96 inputs
  const GgufTensorName up{"blk.0.ffn_up.weight", "", GgufConversion::none, 0};
  const int64_t odd[] = {48, 10};
  EXPECT_EQ(std::string(gguf_tensor_type(GgufFileType::q4_k_m, up, odd, 4, false).name), "F16");
  EXPECT_EQ(std::string(gguf_tensor_type(GgufFileType::q8_0, up, odd, 4, false).name), "F16");
}

}  // namespace
}  // namespace ds::gguf_export_test
