// The forward pass against HF transformers (tests/fixtures, made by tools/reference): logits at
// every position and greedy continuations, per fixture and compute mode. Error = per position
// max |ours − ref| ÷ max |ref|; the worst position is checked and printed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "engine/sampler.h"
#include "hf_reference.h"
#include "model_logits.h"
#include "io/safetensors_checkpoint.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/ref/ref_backend.h"
#include "model/model_loader.h"
#include "model/sequence_runner.h"

namespace ds {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> fixture_dirs() { return test::text_fixture_dirs(DS_FIXTURES_DIR); }

class HfFixture : public ::testing::TestWithParam<fs::path> {};

TEST_P(HfFixture, LogitsAndGreedyMatchTransformers) {
  const fs::path dir = GetParam();
  const std::string name = dir.filename().string();
  const std::vector<test::HfPrompt> prompts = test::read_hf_prompts(dir);
  ASSERT_FALSE(prompts.empty());
  // The scalar reference and the CPU backend at each ISA this machine has: all must match HF.
  for (const auto& backend_ptr : test::logit_backends())
  for (ComputeMode mode : {ComputeMode::f32, ComputeMode::fast}) {
    Backend& backend = *backend_ptr;
    auto loaded = load_model(dir.string(), backend, mode);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    if (mode == ComputeMode::fast && loaded->model->mode() == ComputeMode::f32) continue;  // fp32 checkpoint
    const bool bf16 = loaded->checkpoint->find(loaded->checkpoint->tensors().begin()->first) &&
                      std::any_of(loaded->checkpoint->tensors().begin(), loaded->checkpoint->tensors().end(),
                                  [](const auto& t) { return t.second.dtype == DType::BF16; });
    const double tolerance = !bf16 ? 1e-4 : mode == ComputeMode::f32 ? 1e-3 : 3e-2;
    const char* mode_name = mode == ComputeMode::f32 ? "f32" : "fast";
    const int64_t vocab = loaded->config.text.vocab_size;
    for (const test::HfPrompt& prompt : prompts) {
      const auto n = static_cast<int64_t>(prompt.ids.size());
      SequenceRunner runner(*loaded->model, n + 32, n);
      std::vector<float> logits;
      ASSERT_TRUE(runner.feed(prompt.ids, LogitsRows::all, logits).ok());
      const test::LogitComparison c = test::compare_logits(logits, prompt.logits, vocab, 3e-2);
      std::cout << name << " [" << backend.name() << "] " << mode_name << " prompt " << n << ": error " << c.max_error << ", argmax "
                << c.agree_all << "/" << c.positions << " (decisive " << c.agree << "/" << c.checked << ")";
      EXPECT_LE(c.max_error, tolerance) << name << " " << mode_name << " prompt of " << n;
      if (mode == ComputeMode::fast) {
        EXPECT_EQ(c.agree, c.checked) << "argmax where HF's top-2 margin is decisive";
      }
      if (!prompt.logits_hf_bf16.empty()) {
        const test::LogitComparison user = test::compare_logits(logits, prompt.logits_hf_bf16, vocab, 3e-2);
        std::cout << "; vs HF bf16: error " << user.max_error << ", argmax " << user.agree_all << "/" << user.positions;
      }
      // Greedy continuation: prefill logits' last row, then decode one token at a time.
      std::vector<int32_t> greedy;
      std::vector<float> step(logits.end() - vocab, logits.end());
      while (greedy.size() < prompt.greedy.size()) {
        greedy.push_back(argmax(step));
        ASSERT_TRUE(runner.feed(std::span(&greedy.back(), 1), LogitsRows::last, step).ok());
      }
      size_t same = 0;
      while (same < greedy.size() && greedy[same] == prompt.greedy[same]) ++same;
      std::cout << "; greedy " << same << "/" << greedy.size() << " identical\n";
      if (!bf16) {
        EXPECT_EQ(greedy, prompt.greedy) << name << " prompt of " << n;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, HfFixture, ::testing::ValuesIn(fixture_dirs()),
                         [](const auto& info) { return info.param.filename().string(); });

}  // namespace
}  // namespace ds
