// Engine tests over a real (micro) Qwen3.5 checkpoint: 16 requests of different lengths in one
// batch give exactly the tokens each gives alone (greedy and seeded sampling), and a 5,000-token
// prompt prefilled in chunks beside running decodes gives exactly the tokens it gives alone.
#include <gtest/gtest.h>

#include <fstream>

#include "engine/engine.h"
#include "engine/qwen35_step_model.h"
#include "kernels/cpu/cpu_backend.h"
#include "micro_checkpoint.h"
#include "model/model_loader.h"
#include "stream_tokens.h"
#include "test_util.h"
#include "util/random.h"

namespace ds {
namespace {

using test::drain_tokens;

class EngineOnModel : public ::testing::Test {
 protected:
  test::TempDir tmp_;
  CpuBackend backend_{detect_isa(), 2};
  LoadedModel loaded_;
  std::unique_ptr<Qwen35StepModel> step_model_;

  void SetUp() override {
    test::MicroOptions options;
    options.layers = 8;  // LLLF LLLF
    test::write_micro_checkpoint(tmp_ / "m", options);
    // Room for the 5,000-token prompt (the micro config says 4,096).
    auto config = nlohmann::json::parse(test::read_file(tmp_ / "m/config.json"));
    config["text_config"]["max_position_embeddings"] = 8192;
    test::write_file(tmp_ / "m/config.json", config.dump());
    auto loaded = load_model(tmp_ / "m", backend_, ComputeMode::fast);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    loaded_ = std::move(loaded).value();
    step_model_ = std::make_unique<Qwen35StepModel>(*loaded_.model);
  }
  std::unique_ptr<Engine> start(SchedulerLimits limits) {
    EngineOptions options;
    options.cache_memory = 64 << 20;
    options.limits = limits;
    auto engine = Engine::start(*step_model_, options);
    EXPECT_TRUE(engine.ok()) << engine.status().message();
    return std::move(engine).value();
  }
  int64_t vocab() const { return loaded_.config.text.vocab_size; }
};

TEST_F(EngineOnModel, SixteenRequestsTogetherGiveWhatEachGivesAlone) {
  std::vector<std::vector<int32_t>> prompts;
  std::vector<SamplingParams> params;
  for (int i = 0; i < 16; ++i) {
    prompts.push_back(test::random_tokens(1 + 23 * i, vocab(), 100 + i));  // 1 .. 346 tokens
    SamplingParams p;
    p.max_tokens = 12;
    p.ignore_eos = true;
    if (i % 2 == 1) {  // half of them sample, with their own seeds
      p.temperature = 1.0f;
      p.top_p = 0.95f;
      p.seed = 7 + i;
    }
    params.push_back(p);
  }
  std::vector<std::vector<int32_t>> alone;
  {
    auto engine = start({256, 16});
    for (int i = 0; i < 16; ++i) alone.push_back(drain_tokens(**engine->submit(prompts[i], params[i])));
  }
  auto engine = start({256, 16});
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (int i = 0; i < 16; ++i) streams.push_back(*engine->submit(prompts[i], params[i]));
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(drain_tokens(*streams[i]), alone[i]) << "request " << i << " (" << prompts[i].size() << " prompt tokens)";
    EXPECT_EQ(alone[i].size(), 12u);
  }
  EXPECT_EQ(engine->counters().prompt_tokens, 1 * 16 + 23 * 120);
}

TEST_F(EngineOnModel, LongPromptChunkedBesideDecodesGivesWhatItGivesAlone) {
  const std::vector<int32_t> long_prompt = test::random_tokens(5000, vocab(), 1);
  SamplingParams p;
  p.max_tokens = 8;
  p.ignore_eos = true;
  std::vector<int32_t> alone;
  {
    auto engine = start({2048, 4});  // alone: a few large chunks
    alone = drain_tokens(**engine->submit(long_prompt, p));
  }
  auto engine = start({200, 4});  // beside decodes: 64-token chunks, one per step
  SamplingParams chatter = p;
  chatter.max_tokens = 120;
  auto a = *engine->submit(test::random_tokens(30, vocab(), 2), chatter);
  auto b = *engine->submit(test::random_tokens(3, vocab(), 3), chatter);
  auto first = a->next();  // the short requests are decoding before the long one arrives
  auto long_stream = *engine->submit(long_prompt, p);
  EXPECT_EQ(drain_tokens(*long_stream), alone);
  const int64_t steps_with_long = engine->counters().steps;
  EXPECT_EQ(drain_tokens(*a).size() + (first ? first->tokens.size() : 0), 120u);
  EXPECT_EQ(drain_tokens(*b).size(), 120u);
  EXPECT_GT(steps_with_long, 5000 / 200) << "the long prompt was split across steps";
}

}  // namespace
}  // namespace ds
