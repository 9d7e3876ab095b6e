// The prefix cache over a real (micro) Qwen3.5 checkpoint: a request that starts from a cached
// prefix gives bit-identical logits and tokens to the same request computed from scratch, for a
// hit at each kind of snapshot (message start, end of an earlier prompt, geometric position),
// greedy and seeded sampling, alone and in a batch. A hit where an earlier generation stopped
// (rule 4) came from decode steps: it agrees with cold to the recurrent-vs-chunked rounding, and
// that bound is what is tested.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <mutex>

#include "engine/engine.h"
#include "engine/qwen35_step_model.h"
#include "kernels/cpu/cpu_backend.h"
#include "micro_checkpoint.h"
#include "model/model_loader.h"
#include "test_util.h"

namespace ds::prefix_cache_model_test {
namespace {

constexpr int32_t kMessageStart = 5;  // plays <|im_start|>; text() never produces it

std::vector<int32_t> text(uint64_t seed, int64_t length) {
  std::vector<int32_t> out;
  for (int64_t i = 0; i < length; ++i) out.push_back(static_cast<int32_t>(10 + splitmix64(seed) % 500));
  return out;
}

std::vector<int32_t> concat(std::initializer_list<std::vector<int32_t>> parts) {
  std::vector<int32_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

struct Output {
  std::vector<int32_t> tokens;
  std::vector<std::vector<float>> logits;  // the row each token was sampled from
  int64_t cached = 0;
};

class PrefixCacheOnModel : public ::testing::Test {
 protected:
  test::TempDir tmp_;
  CpuBackend backend_{detect_isa(), 2};
  LoadedModel loaded_;
  std::unique_ptr<Qwen35StepModel> step_model_;
  std::mutex mutex_;
  std::map<uint64_t, std::vector<std::vector<float>>> logits_;  // by request id

  void SetUp() override { load(ComputeMode::fast); }
  void load(ComputeMode mode) {
    step_model_.reset();
    test::MicroOptions options;
    options.layers = 8;  // LLLF LLLF
    if (!std::filesystem::exists(tmp_ / "m")) test::write_micro_checkpoint(tmp_ / "m", options);
    auto loaded = load_model(tmp_ / "m", backend_, mode);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    loaded_ = std::move(loaded).value();
    step_model_ = std::make_unique<Qwen35StepModel>(*loaded_.model);
  }
  std::unique_ptr<Engine> start(bool prefix_cache) {
    logits_.clear();  // request ids start again at 0
    EngineOptions options;
    options.cache_memory = 64 << 20;
    options.prefix_cache_memory = prefix_cache ? 32 << 20 : 0;
    options.limits = {256, 8};
    options.snapshots.message_start_tokens = {kMessageStart};
    options.logits_hook = [this](uint64_t id, std::span<const int32_t>, std::span<const int32_t>, std::span<float> row) {
      std::lock_guard lock(mutex_);
      logits_[id].emplace_back(row.begin(), row.end());
    };
    auto engine = Engine::start(*step_model_, options);
    EXPECT_TRUE(engine.ok()) << engine.status().message();
    return std::move(engine).value();
  }
  static SamplingParams params(bool sampled) {
    SamplingParams p;
    p.max_tokens = 6;
    p.ignore_eos = true;
    if (sampled) {
      p.temperature = 1.0f;
      p.seed = 11;
    }
    return p;
  }
  Output collect(RequestStream& stream) {
    Output out;
    while (auto event = stream.next()) {
      for (const SampledToken& t : event->tokens) out.tokens.push_back(t.token);
      if (event->finish) {
        EXPECT_EQ(*event->finish, FinishReason::length) << event->error;
      }
    }
    out.cached = stream.cached_tokens();
    std::lock_guard lock(mutex_);
    out.logits = logits_[stream.id()];
    return out;
  }
  Output run(Engine& engine, const std::vector<int32_t>& prompt, bool sampled) {
    return collect(**engine.submit(prompt, params(sampled)));
  }

  // Runs `donor` then `target` on a prefix-caching engine (target alone, or among `others`), and
  // `target` on an engine without one; the two must agree bit for bit.
  void expect_warm_equals_cold(const std::vector<int32_t>& donor, const std::vector<int32_t>& target,
                               int64_t expected_hit, bool batched) {
    for (bool sampled : {false, true}) {
      SCOPED_TRACE(sampled ? "seeded sampling" : "greedy");
      const Output cold = run(*start(false), target, sampled);
      EXPECT_EQ(cold.cached, 0);
      auto engine = start(true);
      run(*engine, donor, sampled);
      std::vector<std::shared_ptr<RequestStream>> others;
      if (batched)
        for (int i = 0; i < 3; ++i) others.push_back(*engine->submit(text(40 + i, 100 + 70 * i), params(sampled)));
      const Output warm = collect(**engine->submit(target, params(sampled)));
      for (auto& other : others) collect(*other);
      EXPECT_EQ(warm.cached, expected_hit);
      EXPECT_EQ(warm.tokens, cold.tokens);
      ASSERT_EQ(warm.logits.size(), cold.logits.size());
      for (size_t i = 0; i < warm.logits.size(); ++i) EXPECT_EQ(warm.logits[i], cold.logits[i]) << "logits row " << i;
    }
  }
};

TEST_F(PrefixCacheOnModel, HitAtAMessageStartEqualsColdAloneAndBatched) {
  // Turn 2 of a chat: the history up to the assistant message is shared, the answer re-rendered.
  const std::vector<int32_t> head = concat({{kMessageStart}, text(1, 150), {kMessageStart}, text(2, 60)});  // 212
  const std::vector<int32_t> donor = concat({head, {kMessageStart}, text(3, 2), text(4, 9)});
  const std::vector<int32_t> target = concat({head, {kMessageStart}, text(5, 90), {kMessageStart}, text(6, 30)});
  expect_warm_equals_cold(donor, target, 192, false);  // the chunk boundary before position 212
  expect_warm_equals_cold(donor, target, 192, true);
}

TEST_F(PrefixCacheOnModel, HitAtAnEarlierPromptsEndEqualsCold) {
  const std::vector<int32_t> donor = text(7, 300);
  const std::vector<int32_t> target = concat({donor, text(8, 50)});  // the prompt continued
  expect_warm_equals_cold(donor, target, 256, false);
  expect_warm_equals_cold(donor, target, 256, true);
}

TEST_F(PrefixCacheOnModel, HitAtAGeometricPositionEqualsCold) {
  const std::vector<int32_t> document = text(9, 1100);
  expect_warm_equals_cold(concat({document, text(10, 200)}), concat({document, text(11, 40)}), 1024, false);
}

// Rule 4: a client sends prompt + completion back with a new question. The warm run starts where
// the generation stopped (its state from decode steps); a cold run prefills everything. They agree
// to rounding: every logit within kDecodedBound of the row's largest magnitude, in either mode.
TEST_F(PrefixCacheOnModel, HitWhereAGenerationStoppedAgreesWithColdToRounding) {
  constexpr float kDecodedBound = 1e-3f;  // measured in docs/engine.md (rule 4)
  for (ComputeMode mode : {ComputeMode::fast, ComputeMode::f32}) {
    SCOPED_TRACE(mode == ComputeMode::fast ? "fast" : "f32");
    load(mode);
    const std::vector<int32_t> donor = text(12, 300);
    auto engine = start(true);
    const Output first = run(*engine, donor, false);
    const std::vector<int32_t> target = concat({donor, first.tokens, text(13, 40)});
    const Output warm = run(*engine, target, false);
    EXPECT_EQ(warm.cached, 300 + 5) << "the prompt and every generated token but the last (never computed)";
    const Output cold = run(*start(false), target, false);
    ASSERT_EQ(warm.logits.size(), cold.logits.size());
    float worst = 0.0f;
    for (size_t i = 0; i < warm.logits.size(); ++i) {
      float scale = 0.0f, diff = 0.0f;
      for (size_t v = 0; v < cold.logits[i].size(); ++v) {
        scale = std::max(scale, std::fabs(cold.logits[i][v]));
        diff = std::max(diff, std::fabs(warm.logits[i][v] - cold.logits[i][v]));
      }
      worst = std::max(worst, diff / scale);
      EXPECT_LE(diff, kDecodedBound * scale) << "logits row " << i;
      if (warm.tokens[i] != cold.tokens[i]) break;  // a near tie went the other way: later rows differ in input
    }
    std::printf("rule-4 hit vs cold (%s): max |Δlogit| / max |logit| = %.3g over %zu rows\n",
                mode == ComputeMode::fast ? "fast" : "f32", worst, warm.logits.size());
  }
}

}  // namespace
}  // namespace ds::prefix_cache_model_test
