// The MTP head of a GGUF (llama.cpp's nextn block, tests/fixtures/gguf/mtp_b_bf16_untied-BF16.gguf made by
// its converter) as the engine's drafter: greedy output with 2 drafts per step is plain decoding's token
// for token, alone and batched — with the head's own drafts (random: it predicts nothing) and with its
// drafts replaced by the true continuation after it ran (every draft accepted: accepted runs through
// the same path, as mtp_engine_test.cpp does); a GGUF without nextn blocks refuses the drafter.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "engine/engine.h"
#include "engine/mtp_drafter.h"
#include "engine/qwen35_step_model.h"
#include "kernels/cpu/cpu_backend.h"
#include "model/model_loader.h"
#include "stream_tokens.h"
#include "test_util.h"

namespace ds::gguf_mtp_engine_test {
namespace {

namespace fs = std::filesystem;
const fs::path kGgufDir = fs::path(DS_FIXTURES_DIR) / "gguf";

struct Outcome {
  std::vector<std::vector<int32_t>> outputs;
  EngineCounters counters;
};

Outcome run(StepModel& model, MtpDrafter* drafter, int64_t k, const std::vector<std::vector<int32_t>>& prompts,
            bool together) {
  EngineOptions options;
  options.adaptive_drafts = false;  // k drafts every round
  options.cache_memory = 16 << 20;
  options.limits = {256, 8};
  options.speculative_tokens = k;
  options.drafter = drafter;
  auto engine = Engine::start(model, options);
  EXPECT_TRUE(engine.ok()) << engine.status().message();
  if (!engine.ok()) return {};
  SamplingParams greedy;
  greedy.max_tokens = 24;
  greedy.ignore_eos = true;
  Outcome out;
  out.outputs = test::run_requests(**engine, prompts, std::vector<SamplingParams>(prompts.size(), greedy), together);
  out.counters = (*engine)->counters();
  return out;
}

TEST(GgufMtpEngine, GreedyOutputWithTwoDraftsIsPlainDecodings) {
  CpuBackend backend(detect_isa(), 2);
  auto loaded = load_model((kGgufDir / "mtp_b_bf16_untied-BF16.gguf").string(), backend, ComputeMode::fast);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  ASSERT_TRUE(loaded->model->has_mtp());
  Qwen35StepModel plain_model(*loaded->model);
  Qwen35StepModel mtp_model(*loaded->model, default_kv_dtype(*loaded->model), /*with_mtp=*/true);
  std::vector<std::vector<int32_t>> prompts;
  for (int64_t length : {1, 17, 64, 130}) prompts.push_back(test::random_tokens(length, 512, 900 + static_cast<uint64_t>(length)));
  const Outcome plain = run(plain_model, nullptr, 0, prompts, true);
  const auto truths = test::continued(prompts, plain.outputs);
  for (bool oracle : {false, true})
  for (bool together : {true, false}) {
    SCOPED_TRACE(testing::Message() << (oracle ? "true drafts, " : "the head's drafts, ") << (together ? "batch" : "alone"));
    auto drafter = MtpDrafter::create(mtp_model);
    ASSERT_TRUE(drafter.ok()) << drafter.status().message();
    if (oracle)
      (*drafter)->replace_drafts = [&truths](DraftRequest& r) {
        for (const auto& t : truths)
          if (t.size() >= r.tokens.size() && std::equal(r.tokens.begin(), r.tokens.end(), t.begin())) {
            r.drafts->clear();
            for (int64_t j = 0; j < r.k; ++j) {
              const size_t at = r.tokens.size() + static_cast<size_t>(j);
              r.drafts->push_back(at < t.size() ? t[at] : 0);
            }
          }
      };
    const Outcome spec = run(mtp_model, drafter->get(), 2, prompts, together);
    EXPECT_EQ(spec.outputs, plain.outputs);
    EXPECT_GT(spec.counters.spec_drafts, 0);
    EXPECT_EQ(spec.counters.generation_tokens, plain.counters.generation_tokens);
    if (oracle) {
      EXPECT_GT(spec.counters.spec_accepted_tokens, 0);
      if (together) {  // plain ran batched too
        EXPECT_LT(spec.counters.steps, plain.counters.steps);
      }
    }
  }
}

TEST(GgufMtpEngine, GgufWithoutNextnBlocksHasNoHead) {
  CpuBackend backend(detect_isa(), 1);
  auto loaded = load_model((kGgufDir / "c_bf16_untied-BF16.gguf").string(), backend, ComputeMode::fast);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_FALSE(loaded->model->has_mtp());
  Qwen35StepModel asked(*loaded->model, default_kv_dtype(*loaded->model), /*with_mtp=*/true);
  EXPECT_ERROR_CONTAINS(MtpDrafter::create(asked), "has none (no mtp.* tensors)");
}

}  // namespace
}  // namespace ds::gguf_mtp_engine_test
