// Int8 (weights and, in the matmuls, activations quantised per row and group of 32, int8 × int8
// products) against the checkpoint's own weights in fast mode on the HF fixtures, teacher-forced over
// every position of every prompt: mean KL(native ‖ int8) ≤ 0.01 and the same argmax at ≥ 99% of the
// positions where the native top-2 margin is decisive (> 3e-2 · max |logit|, the bf16 tests' rule).
// Measured (docs/numerics.md): mean KL 0.0011–0.0070, decisive agreement 1,970 of 1,976 positions,
// plain top-1 agreement 94.6–99.8%. Plain top-1 is held at ≥ 94%, not the 99%: these tiny
// random models have near-ties (top-2 margins down to 1e-5) that any rounding flips (weight-only int8
// was 95.5–100%).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "engine/sampler.h"
#include "io/safetensors_checkpoint.h"
#include "kernels/cpu/cpu_backend.h"
#include "model/model_loader.h"
#include "model/sequence_runner.h"

namespace ds {
namespace {

namespace fs = std::filesystem;

std::vector<std::vector<int32_t>> fixture_prompts(const fs::path& dir) {
  auto file = SafetensorsCheckpoint::open_file((dir / "reference.safetensors").string());
  std::vector<std::vector<int32_t>> prompts;
  for (int k = 0; file.ok() && file->contains("prompt" + std::to_string(k) + ".input_ids"); ++k) {
    const TensorView* view = file->find("prompt" + std::to_string(k) + ".input_ids");
    std::vector<int64_t> ids(view->numel());
    std::memcpy(ids.data(), view->data, view->nbytes);
    prompts.emplace_back(ids.begin(), ids.end());
  }
  return prompts;
}

std::vector<float> all_logits(Qwen35Model& model, const std::vector<int32_t>& prompt) {
  SequenceRunner runner(model, static_cast<int64_t>(prompt.size()), static_cast<int64_t>(prompt.size()));
  std::vector<float> logits;
  EXPECT_TRUE(runner.feed(prompt, LogitsRows::all, logits).ok());
  return logits;
}

double kl_divergence(std::span<const float> p_logits, std::span<const float> q_logits) {
  auto log_softmax = [](std::span<const float> x) {
    const double max = *std::max_element(x.begin(), x.end());
    double total = 0;
    for (float v : x) total += std::exp(v - max);
    std::vector<double> out(x.size());
    for (size_t i = 0; i < x.size(); ++i) out[i] = x[i] - max - std::log(total);
    return out;
  };
  const auto lp = log_softmax(p_logits), lq = log_softmax(q_logits);
  double kl = 0;
  for (size_t i = 0; i < lp.size(); ++i) kl += std::exp(lp[i]) * (lp[i] - lq[i]);
  return kl;
}

TEST(Int8Weights, AgreeWithNativeWeightsOnEveryFixture) {
  CpuBackend backend(detect_isa(), 2);
  for (const auto& entry : fs::directory_iterator(DS_FIXTURES_DIR)) {
    if (!fs::exists(entry.path() / "reference.safetensors")) continue;
    auto native = load_model(entry.path().string(), backend, ComputeMode::fast);
    auto int8 = load_model(entry.path().string(), backend, ComputeMode::fast, WeightFormat::int8);
    ASSERT_TRUE(native.ok() && int8.ok());
    const int64_t vocab = native->config.text.vocab_size;
    int64_t positions = 0, agree = 0, decisive = 0, decisive_agree = 0;
    double kl_total = 0;
    for (const auto& prompt : fixture_prompts(entry.path())) {
      const auto a = all_logits(*native->model, prompt), b = all_logits(*int8->model, prompt);
      for (size_t r = 0; r < prompt.size(); ++r) {
        const auto ra = std::span(a).subspan(r * vocab, vocab), rb = std::span(b).subspan(r * vocab, vocab);
        const int32_t best = argmax(ra);
        float second = -INFINITY, max_abs = 0;
        for (int64_t i = 0; i < vocab; ++i) {
          if (i != best) second = std::max(second, ra[i]);
          max_abs = std::max(max_abs, std::fabs(ra[i]));
        }
        const bool same = argmax(rb) == best;
        agree += same;
        if (ra[best] - second > 3e-2f * max_abs) {
          ++decisive;
          decisive_agree += same;
        }
        kl_total += kl_divergence(ra, rb);
        ++positions;
      }
    }
    const double agreement = double(agree) / positions, mean_kl = kl_total / positions;
    std::cout << entry.path().filename().string() << ": int8 top-1 agreement " << agreement << " (decisive "
              << decisive_agree << "/" << decisive << "), mean KL " << mean_kl << " over " << positions << " positions\n";
    EXPECT_GE(decisive_agree, 0.99 * decisive) << entry.path();
    EXPECT_GE(agreement, 0.94) << entry.path();
    EXPECT_LE(mean_kl, 0.01) << entry.path();
  }
}

}  // namespace
}  // namespace ds
