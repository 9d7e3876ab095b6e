// Block-FP8 checkpoints against transformers (tests/fixtures/fp8, made by
// tools/reference/make_fp8_fixtures.py: g_fp8_full_blocks with every converted dimension a multiple of
// 128, loaded by transformers' own FP8 loader; h_fp8_partial_blocks with partial blocks):
// - every FP8 weight's values bit-identical to transformers' dequantisation (float32, and the bfloat16
//   values a bf16 model holds), as stored and as FP8 panels, MTP's included;
// - logits on every backend this machine has: f32 mode within 1e-4 of HF fp32 (the weights are exact
//   fp32 values, so this is an fp32 model; measured ≈ 2e-6), fast mode within 3e-2 and the same argmax
//   wherever HF's top-2 margin is decisive (> 3e-2 · max |logit|) — the bound and rule of bf16
//   checkpoints in fast mode, whose error is the bf16 rounding of the matmul inputs (measured ≈ 1e-2);
// - `--weights int8` on them (FP8 requantised to int8 panels) against the FP8 weights: mean KL.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "hf_reference.h"
#include "model_logits.h"
#include "io/model_config.h"
#include "io/safetensors_checkpoint.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/formats/fp8/fp8_blocks_format.h"
#include "kernels/formats/fp8/fp8_panels_format.h"
#include "kernels/ref/ref_backend.h"
#include "model/fp8_weights.h"
#include "model/model_loader.h"
#include "model/qwen35_weights.h"
#include "test_util.h"
#include "util/float16.h"
#include "util/random.h"
#include "util/thread_pool.h"
#include "weights_agreement.h"

namespace ds {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(DS_FIXTURES_DIR) / "fp8";

class Fp8Fixture : public ::testing::TestWithParam<std::string> {
 protected:
  fs::path dir() const { return kFixtures / GetParam(); }
};

std::pair<std::string, std::string> hashes(const Fp8Format& format, const TensorView& w) {
  const int64_t n = w.shape[0], k = w.shape[1];
  std::vector<float> values(static_cast<size_t>(n * k));  // [n, k]
  for (int64_t r = 0; r < n; ++r) format.dequantize_row(w, r, values.data() + r * k);
  std::vector<uint16_t> bf16(values.size());
  for (size_t i = 0; i < values.size(); ++i) bf16[i] = float_to_bf16(values[i]);
  return {test::fnv1a64(values.data(), 4 * values.size()), test::fnv1a64(bf16.data(), 2 * bf16.size())};
}

TEST_P(Fp8Fixture, DequantisedWeightsAreTransformers) {
  const auto expected = nlohmann::json::parse(test::read_file((dir() / "expected.json").string()));
  auto config = load_model_config(dir().string());
  auto checkpoint = SafetensorsCheckpoint::open_dir(dir().string());
  ASSERT_TRUE(config.ok() && checkpoint.ok());
  std::vector<std::string> problems;
  const Fp8Pairing pairing = pair_block_fp8(*checkpoint, *config, &problems);
  EXPECT_TRUE(problems.empty()) << problems.front();
  ASSERT_EQ(pairing.weights.size(), expected.size());
  for (const auto& [name, want] : expected.items()) {
    const TensorView& w = pairing.weights.at(name);
    EXPECT_EQ(w.shape, want["shape"].get<std::vector<int64_t>>()) << name;
    const auto [f32, bf16] = hashes(fp8_blocks_format(), w);
    EXPECT_EQ(f32, want["fnv1a64_f32"].get<std::string>()) << name << " (float32 values)";
    EXPECT_EQ(bf16, want["fnv1a64_bf16"].get<std::string>()) << name << " (bfloat16 values)";
    std::vector<std::byte> packed(fp8_panels_format().bytes(w.shape[0], w.shape[1]));
    fp8_panels_format().pack(w, 0, fp8_panels_format().panels(w.shape[0]), packed.data());
    EXPECT_EQ(hashes(fp8_panels_format(), fp8_panels_format().packed_view(w, packed.data())).first, f32) << name << " (FP8 panels)";
  }
  BindReport report;  // and binding takes them all, the scales included
  EXPECT_TRUE(bind_qwen35_weights(*checkpoint, *config, &report).ok());
}

TEST_P(Fp8Fixture, LogitsMatchTransformers) {
  const std::vector<test::HfPrompt> prompts = test::read_hf_prompts(dir());
  ASSERT_FALSE(prompts.empty());
  for (const auto& backend : test::logit_backends())
    for (ComputeMode mode : {ComputeMode::f32, ComputeMode::fast}) {
      auto loaded = load_model(dir().string(), *backend, mode);
      ASSERT_TRUE(loaded.ok()) << loaded.status().message();
      const int64_t vocab = loaded->config.text.vocab_size;
      for (const test::HfPrompt& prompt : prompts) {
        const std::vector<float> logits = test::all_logits(*loaded->model, prompt.ids);
        const test::LogitComparison c = test::compare_logits(logits, prompt.logits, vocab, 3e-2);
        const test::LogitComparison user = test::compare_logits(logits, prompt.logits_hf_bf16, vocab, 3e-2);
        std::cout << GetParam() << " [" << backend->name() << "] " << (mode == ComputeMode::f32 ? "f32" : "fast")
                  << " prompt " << prompt.ids.size() << ": error " << c.max_error << ", argmax " << c.agree_all << "/"
                  << c.positions << " (decisive " << c.agree << "/" << c.checked << "); vs HF bf16: error "
                  << user.max_error << "\n";
        EXPECT_LE(c.max_error, mode == ComputeMode::f32 ? 1e-4 : 3e-2);
        if (mode == ComputeMode::fast) {
          EXPECT_EQ(c.agree, c.checked) << "argmax where HF's top-2 margin is decisive";
        }
      }
    }
}

// FP8 requantised to int8 panels at load (`--weights int8`: weights per 32 inputs, activations int8 or
// 16-bit) against the FP8 weights themselves, both in fast mode.
TEST_P(Fp8Fixture, Int8RequantisationAgainstTheFp8Weights) {
  CpuBackend backend(detect_isa(), 2);
  auto fp8 = load_model(dir().string(), backend, ComputeMode::fast);
  auto int8 = load_model(dir().string(), backend, ComputeMode::fast, WeightsChoice::int8);
  ASSERT_TRUE(fp8.ok() && int8.ok());
  test::Agreement agreement;
  for (const test::HfPrompt& prompt : test::read_hf_prompts(dir()))
    agreement.add(test::all_logits(*fp8->model, prompt.ids),
                  test::all_logits(*int8->model, prompt.ids), fp8->config.text.vocab_size);
  std::cout << GetParam() << ": int8 (requantised FP8) vs FP8 " << agreement.summary() << "\n";
  EXPECT_LE(agreement.mean_kl(), 0.01);
  EXPECT_GE(agreement.decisive_agree, 0.95 * agreement.decisive);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Fp8Fixture, ::testing::Values("g_fp8_full_blocks", "h_fp8_partial_blocks"),
                         [](const auto& info) { return info.param; });

// The 2B shape (opt-in, CTest test fp8_accuracy_2b, label slow): `make-checkpoint --shape 2b --dtype fp8`
// (the 2B bf16 checkpoint of the same seed, quantised), 512 seeded random tokens teacher-forced:
// - `--weights int8` against the FP8 weights (FP8 kernels: the exact e4m3 × scale values, bf16 inputs);
// - with DS_FP8_ACCURACY_BF16_MODEL naming that bf16 checkpoint, FP8 against it: what block FP8 costs.
//   DS_FP8_ACCURACY_MODEL=models/qwen3.5-2b-fp8-random DS_FP8_ACCURACY_BF16_MODEL=models/qwen3.5-2b-random
//   build/tests/model_tests --gtest_filter='Fp8Weights.*'
TEST(Fp8Weights, AccuracyOn512TokensOfAFullSizeCheckpoint) {
  const char* dir = std::getenv("DS_FP8_ACCURACY_MODEL");
  ASSERT_NE(dir, nullptr) << "set DS_FP8_ACCURACY_MODEL to a block-FP8 checkpoint directory";
  ASSERT_TRUE(fs::exists(std::string(dir) + "/config.json"))
      << dir << " has no checkpoint: make it with `deltaserve make-checkpoint --shape 2b --dtype fp8 --out " << dir << "`";
  CpuBackend backend(detect_isa(), physical_cores());
  std::vector<float> fp8_logits;
  std::vector<int32_t> tokens;
  int64_t vocab = 0;
  {
    auto fp8 = load_model(dir, backend, ComputeMode::fast);
    ASSERT_TRUE(fp8.ok()) << fp8.status().message();
    vocab = fp8->config.text.vocab_size;
    tokens = test::random_tokens(512, vocab, 2026);
    fp8_logits = test::all_logits(*fp8->model, tokens);
  }
  {
    auto int8 = load_model(dir, backend, ComputeMode::fast, WeightsChoice::int8);
    ASSERT_TRUE(int8.ok());
    test::Agreement agreement;
    agreement.add(fp8_logits, test::all_logits(*int8->model, tokens), vocab);
    std::cout << dir << ": int8 (requantised FP8) vs FP8 " << agreement.summary() << "\n";
    EXPECT_LE(agreement.mean_kl(), 0.02);
  }
  if (const char* bf16_dir = std::getenv("DS_FP8_ACCURACY_BF16_MODEL")) {
    auto bf16 = load_model(bf16_dir, backend, ComputeMode::fast);
    ASSERT_TRUE(bf16.ok()) << bf16.status().message();
    test::Agreement agreement;
    agreement.add(test::all_logits(*bf16->model, tokens), fp8_logits, vocab);
    std::cout << dir << ": FP8 vs its bf16 source " << agreement.summary() << "\n";
  }
}

}  // namespace
}  // namespace ds
