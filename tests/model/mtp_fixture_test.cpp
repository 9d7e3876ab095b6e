// The MTP head against its PyTorch reference (tests/fixtures/mtp, made by tools/reference/make_mtp_fixtures.py:
// vLLM's Qwen3_5MultiTokenPredictor on HF's own decoder layer): the main model's hidden after the final norm,
// teacher-forced MTP logits and hidden at every position, and greedy drafts chained 4 deep after several
// prefixes — per backend and compute mode. Error = per row max |ours − ref| ÷ max |ref|, the worst row.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "engine/sampler.h"
#include "hf_reference.h"
#include "io/safetensors_checkpoint.h"
#include "model/model_loader.h"
#include "model/sequence_runner.h"
#include "model_logits.h"

namespace ds {
namespace {

namespace fs = std::filesystem;

struct MtpPrompt {
  std::vector<int32_t> sequence;      // [L+1] prompt + the main model's greedy continuation
  std::vector<float> hidden;          // [L+1, H] main model, after the final norm
  std::vector<float> mtp_logits;      // [L, V] row i = (hidden[i], sequence[i+1]) at position i
  std::vector<float> mtp_hidden;      // [L, H] after mtp.norm
  std::vector<int64_t> draft_ends;    // [P] committed prefix sequence[0..m]
  std::vector<int32_t> drafts;        // [P, 4]
  std::vector<float> draft_logits;    // [P, 4, V]
};

template <typename T, typename Out>
std::vector<Out> read_tensor(const SafetensorsCheckpoint& file, const std::string& name) {
  const TensorView* view = file.find(name);
  EXPECT_NE(view, nullptr) << name;
  if (view == nullptr) return {};
  std::vector<T> raw(view->numel());
  std::memcpy(raw.data(), view->data, view->nbytes);
  return std::vector<Out>(raw.begin(), raw.end());
}

std::vector<MtpPrompt> read_mtp_prompts(const fs::path& dir) {
  auto file = SafetensorsCheckpoint::open_file((dir / "mtp_reference.safetensors").string());
  EXPECT_TRUE(file.ok()) << file.status().message();
  std::vector<MtpPrompt> prompts;
  for (int k = 0; file.ok() && file->contains("prompt" + std::to_string(k) + ".sequence"); ++k) {
    const std::string p = "prompt" + std::to_string(k) + ".";
    prompts.push_back({read_tensor<int64_t, int32_t>(*file, p + "sequence"), read_tensor<float, float>(*file, p + "hidden"),
                       read_tensor<float, float>(*file, p + "mtp_logits"), read_tensor<float, float>(*file, p + "mtp_hidden"),
                       read_tensor<int64_t, int64_t>(*file, p + "draft_ends"), read_tensor<int64_t, int32_t>(*file, p + "drafts"),
                       read_tensor<float, float>(*file, p + "draft_logits")});
  }
  return prompts;
}

std::vector<fs::path> mtp_fixture_dirs() {
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(fs::path(DS_FIXTURES_DIR) / "mtp"))
    if (fs::exists(entry.path() / "mtp_reference.safetensors")) dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

// Whether the reference's top-2 margin of a row exceeds `fraction` of its max |logit|.
bool decisive(std::span<const float> row, double fraction) {
  const int32_t best = argmax(row);
  float second = -INFINITY, max_abs = 0;
  for (size_t i = 0; i < row.size(); ++i) {
    if (static_cast<int32_t>(i) != best) second = std::max(second, row[i]);
    max_abs = std::max(max_abs, std::fabs(row[i]));
  }
  return row[best] - second > fraction * max_abs;
}

constexpr int kDraftSteps = 4;

class MtpFixture : public ::testing::TestWithParam<fs::path> {};

TEST_P(MtpFixture, HiddenMtpLogitsAndDraftsMatchTheReference) {
  const fs::path dir = GetParam();
  const std::string name = dir.filename().string();
  const std::vector<MtpPrompt> prompts = read_mtp_prompts(dir);
  ASSERT_EQ(prompts.size(), 5u);
  for (const auto& backend_ptr : test::logit_backends())
  for (ComputeMode mode : {ComputeMode::f32, ComputeMode::fast}) {
    Backend& backend = *backend_ptr;
    auto loaded = load_model(dir.string(), backend, mode);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    Qwen35Model& model = *loaded->model;
    ASSERT_TRUE(model.has_mtp());
    if (mode == ComputeMode::fast && model.mode() == ComputeMode::f32) continue;  // fp32 checkpoint
    const bool fast = model.mode() == ComputeMode::fast;
    // fp32 reference mode: the 1e-4 (the fixture computes on the stored values, BF16 upcast); fast
    // mode: the forward's fast-mode bound (docs/numerics.md), argmax equal where the reference is decisive.
    const double tolerance = fast ? 3e-2 : 1e-4;
    const int64_t V = model.config().vocab_size, H = model.config().hidden_size;
    double worst_hidden = 0, worst_logits = 0, worst_g = 0, worst_drafts = 0;
    int drafts_compared = 0;
    for (const MtpPrompt& p : prompts) {
      const auto total = static_cast<int64_t>(p.sequence.size());
      // Teacher-forced: the main model over the whole sequence, then the MTP over every pair.
      SequenceRunner runner(model, total + kDraftSteps, total, default_kv_dtype(model), kKvBlockSize, /*with_mtp=*/true);
      std::vector<float> no_logits, hidden, logits, g;
      ASSERT_TRUE(runner.feed(p.sequence, LogitsRows::none, no_logits, LogitsRows::all, hidden).ok());
      worst_hidden = std::max(worst_hidden, test::worst_error(hidden, p.hidden, H));
      const std::span<const int32_t> next(p.sequence.data() + 1, static_cast<size_t>(total - 1));
      ASSERT_TRUE(runner.mtp(std::span(hidden).first(static_cast<size_t>((total - 1) * H)), next, 0, 0, LogitsRows::all,
                             logits, g).ok());
      worst_logits = std::max(worst_logits, test::worst_error(logits, p.mtp_logits, V));
      worst_g = std::max(worst_g, test::worst_error(g, p.mtp_hidden, H));
      const test::LogitComparison c = test::compare_logits(logits, p.mtp_logits, V, 3e-2);
      EXPECT_EQ(c.agree, c.checked) << name << ": MTP argmax where the reference is decisive";

      // Drafts after committing sequence[0..m]: main prefill over [0, m), MTP over its pairs, chain 3 more.
      for (size_t e = 0; e < p.draft_ends.size(); ++e) {
        const int64_t m = p.draft_ends[e];
        SequenceRunner drafter(model, total + kDraftSteps, total, default_kv_dtype(model), kKvBlockSize, true);
        std::vector<float> h;
        ASSERT_TRUE(drafter.feed(std::span(p.sequence).first(static_cast<size_t>(m)), LogitsRows::none, no_logits,
                                 LogitsRows::all, h).ok());
        std::vector<float> step_logits, step_g;
        ASSERT_TRUE(drafter.mtp(h, std::span(p.sequence).subspan(1, static_cast<size_t>(m)), 0, 0, LogitsRows::last,
                                step_logits, step_g).ok());
        bool comparable = true;  // fast mode: drafts are compared while every earlier step was decisive
        for (int j = 0; j < kDraftSteps; ++j) {
          const std::span<const float> ref(p.draft_logits.data() + (e * kDraftSteps + j) * V, static_cast<size_t>(V));
          worst_drafts = std::max(worst_drafts, test::worst_error(step_logits, std::vector<float>(ref.begin(), ref.end()), V));
          const int32_t expected = p.drafts[e * kDraftSteps + j];
          comparable = comparable && (!fast || decisive(ref, 3e-2));
          if (comparable) {
            EXPECT_EQ(argmax(step_logits), expected) << name << " prefix " << m << " draft " << j + 1;
            ++drafts_compared;
          }
          if (j + 1 == kDraftSteps) break;
          // The chain follows the reference's draft, so later steps stay comparable to it.
          const std::vector<float> prev = step_g;
          ASSERT_TRUE(drafter.mtp(prev, std::span(&expected, 1), m + j, j + 1, LogitsRows::last, step_logits, step_g).ok());
        }
      }
    }
    std::cout << name << " [" << backend.name() << "] " << (fast ? "fast" : "f32") << ": hidden " << worst_hidden
              << ", MTP logits " << worst_logits << ", MTP hidden " << worst_g << ", draft logits " << worst_drafts << ", "
              << drafts_compared << " drafts compared\n";
    EXPECT_LE(worst_hidden, tolerance) << name;
    EXPECT_LE(worst_logits, tolerance) << name;
    EXPECT_LE(worst_g, tolerance) << name;
    EXPECT_LE(worst_drafts, tolerance) << name;
    if (!fast) {
      EXPECT_EQ(drafts_compared, 4 * 19) << "every draft of every prefix";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, MtpFixture, ::testing::ValuesIn(mtp_fixture_dirs()),
                         [](const auto& info) { return info.param.filename().string(); });

}  // namespace
}  // namespace ds
