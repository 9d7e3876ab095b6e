// The forward pass against HF transformers (tests/fixtures, made by tools/reference): logits at
// every position and greedy continuations, per fixture and compute mode. Error = per position
// max |ours − ref| ÷ max |ref|; the worst position is checked and printed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "engine/sampler.h"
#include "io/safetensors_checkpoint.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/ref/ref_backend.h"
#include "model/model_loader.h"
#include "model/sequence_runner.h"

namespace ds {
namespace {

namespace fs = std::filesystem;

struct Prompt {
  std::vector<int32_t> ids;
  std::vector<float> logits;          // [n, vocab] HF fp32
  std::vector<float> logits_hf_bf16;  // [n, vocab] HF bf16 (bf16 fixtures only)
  std::vector<int32_t> greedy;        // 32 new tokens
};

template <typename T, typename Out>
std::vector<Out> read_tensor(const SafetensorsCheckpoint& file, const std::string& name) {
  const TensorView* view = file.find(name);
  if (view == nullptr) return {};
  std::vector<T> raw(view->numel());
  std::memcpy(raw.data(), view->data, view->nbytes);
  return std::vector<Out>(raw.begin(), raw.end());
}

std::vector<Prompt> read_prompts(const fs::path& dir) {
  auto file = SafetensorsCheckpoint::open_file((dir / "reference.safetensors").string());
  EXPECT_TRUE(file.ok()) << file.status().message();
  std::vector<Prompt> prompts;
  for (int k = 0; file->contains("prompt" + std::to_string(k) + ".input_ids"); ++k) {
    const std::string p = "prompt" + std::to_string(k) + ".";
    prompts.push_back({read_tensor<int64_t, int32_t>(*file, p + "input_ids"), read_tensor<float, float>(*file, p + "logits"),
                       read_tensor<float, float>(*file, p + "logits_hf_bf16"), read_tensor<int64_t, int32_t>(*file, p + "greedy")});
  }
  return prompts;
}

struct Comparison {
  double max_error = 0;       // worst position
  int64_t checked = 0;        // positions whose reference top-2 margin is decisive
  int64_t agree = 0;          // of those, argmax equal
  int64_t agree_all = 0;      // argmax equal at any position
  int64_t positions = 0;
};

Comparison compare(const std::vector<float>& ours, const std::vector<float>& ref, int64_t vocab, double margin_fraction) {
  Comparison c;
  for (size_t r = 0; r < ref.size(); r += vocab) {
    double max_ref = 0, max_diff = 0;
    for (int64_t i = 0; i < vocab; ++i) {
      max_ref = std::max(max_ref, double(std::fabs(ref[r + i])));
      max_diff = std::max(max_diff, double(std::fabs(ours[r + i] - ref[r + i])));
    }
    c.max_error = std::max(c.max_error, max_diff / max_ref);
    const auto ref_row = std::span(ref).subspan(r, vocab), our_row = std::span(ours).subspan(r, vocab);
    const int32_t best = argmax(ref_row);
    float second = -INFINITY;
    for (int64_t i = 0; i < vocab; ++i)
      if (i != best) second = std::max(second, ref_row[i]);
    const bool same = argmax(our_row) == best;
    c.positions += 1;
    c.agree_all += same;
    if (ref_row[best] - second > margin_fraction * max_ref) {
      c.checked += 1;
      c.agree += same;
    }
  }
  return c;
}

std::vector<fs::path> fixture_dirs() {
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(DS_FIXTURES_DIR))
    if (fs::exists(entry.path() / "reference.safetensors")) dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

class HfFixture : public ::testing::TestWithParam<fs::path> {};

TEST_P(HfFixture, LogitsAndGreedyMatchTransformers) {
  const fs::path dir = GetParam();
  const std::string name = dir.filename().string();
  const std::vector<Prompt> prompts = read_prompts(dir);
  ASSERT_FALSE(prompts.empty());
  // The scalar reference and the CPU backend at each ISA this machine has: all must match HF.
  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(std::make_unique<RefBackend>());
  for (Isa isa : {Isa::avx2, Isa::avx512, Isa::amx})
    if (detect_isa() >= isa) backends.push_back(std::make_unique<CpuBackend>(isa, 2));
  for (const auto& backend_ptr : backends)
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
    for (const Prompt& prompt : prompts) {
      const auto n = static_cast<int64_t>(prompt.ids.size());
      SequenceRunner runner(*loaded->model, n + 32, n);
      std::vector<float> logits;
      ASSERT_TRUE(runner.feed(prompt.ids, LogitsRows::all, logits).ok());
      const Comparison c = compare(logits, prompt.logits, vocab, 3e-2);
      std::cout << name << " [" << backend.name() << "] " << mode_name << " prompt " << n << ": error " << c.max_error << ", argmax "
                << c.agree_all << "/" << c.positions << " (decisive " << c.agree << "/" << c.checked << ")";
      EXPECT_LE(c.max_error, tolerance) << name << " " << mode_name << " prompt of " << n;
      if (mode == ComputeMode::fast) {
        EXPECT_EQ(c.agree, c.checked) << "argmax where HF's top-2 margin is decisive";
      }
      if (!prompt.logits_hf_bf16.empty()) {
        const Comparison user = compare(logits, prompt.logits_hf_bf16, vocab, 3e-2);
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
