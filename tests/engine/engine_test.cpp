// Engine tests over the fake model: tokens equal to each request's greedy continuation alone
// whatever the batch, seeded sampling independent of the batch, stop ids, validation errors,
// overload, cancellation, and a soak of hundreds of random requests (cancels, overloads,
// preemptions) after which every block and slot is back.
#include "engine/engine.h"

#include <gtest/gtest.h>

#include <thread>

#include "fake_step_model.h"
#include "test_util.h"

namespace ds {
namespace {

using test::FakeStepModel;

std::vector<int32_t> prompt_of(uint64_t seed, int64_t length) {
  std::vector<int32_t> prompt;
  for (int64_t i = 0; i < length; ++i) prompt.push_back(static_cast<int32_t>(splitmix64(seed) % FakeStepModel::kVocab));
  return prompt;
}

// Reads a stream to its end: the tokens and how it finished.
struct Outcome {
  std::vector<int32_t> tokens;
  FinishReason finish = FinishReason::error;
  std::string error;
};
Outcome drain(RequestStream& stream) {
  Outcome out;
  while (auto event = stream.next()) {
    for (const SampledToken& t : event->tokens) out.tokens.push_back(t.token);
    if (event->finish) {
      out.finish = *event->finish;
      out.error = event->error;
    }
  }
  return out;
}

EngineOptions small_engine(uint64_t cache_bytes = 1 << 20) {
  EngineOptions options;
  options.cache_memory = cache_bytes;
  options.limits = {128, 8};
  return options;
}

void expect_all_returned(const Engine& engine) {
  // Counters are published after each step; the last step may still be publishing.
  for (int i = 0; i < 200; ++i) {
    const EngineCounters c = engine.counters();
    if (c.running == 0 && c.waiting == 0 && c.blocks_used == 0 && c.slots_used == 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const EngineCounters c = engine.counters();
  FAIL() << "left: running " << c.running << ", waiting " << c.waiting << ", blocks " << c.blocks_used << ", slots " << c.slots_used;
}

TEST(Engine, ManyRequestsTogetherGiveWhatEachGivesAlone) {
  FakeStepModel model;
  model.step_time = std::chrono::milliseconds(1);
  auto engine = Engine::start(model, small_engine());
  ASSERT_TRUE(engine.ok()) << engine.status().message();
  std::vector<std::vector<int32_t>> prompts;
  std::vector<std::shared_ptr<RequestStream>> streams;
  model.paused = true;  // all 16 queued before the first step computes, however the threads run
  for (int i = 0; i < 16; ++i) {
    prompts.push_back(prompt_of(i, 1 + 37 * i));
    SamplingParams params;
    params.max_tokens = 5 + i;
    auto stream = (*engine)->submit(prompts.back(), params);
    ASSERT_TRUE(stream.ok()) << stream.status().message();
    streams.push_back(*stream);
  }
  model.paused = false;
  for (int i = 0; i < 16; ++i) {
    const Outcome out = drain(*streams[i]);
    EXPECT_EQ(out.finish, FinishReason::length);
    EXPECT_EQ(out.tokens, FakeStepModel::greedy(prompts[i], 5 + i, {})) << "request " << i;
  }
  EXPECT_LE(model.max_call_tokens, 128);
  EXPECT_GT(model.max_call_sequences, 1);  // they did share steps
  expect_all_returned(**engine);
}

TEST(Engine, SeededSamplingDoesNotDependOnTheBatch) {
  auto sample = [](int companions) {
    FakeStepModel model;
    auto engine = Engine::start(model, small_engine());
    SamplingParams params;
    params.temperature = 1.5f;
    params.top_p = 0.9f;
    params.seed = 1234;
    params.max_tokens = 24;
    std::vector<std::shared_ptr<RequestStream>> others;
    for (int i = 0; i < companions; ++i) {
      SamplingParams other = params;
      other.seed = 99 + i;
      others.push_back(*(*engine)->submit(prompt_of(100 + i, 50), other));
    }
    auto stream = (*engine)->submit(prompt_of(7, 70), params);
    return drain(**stream).tokens;
  };
  const std::vector<int32_t> alone = sample(0);
  EXPECT_EQ(alone.size(), 24u);
  EXPECT_EQ(sample(5), alone);
}

TEST(Engine, StopsOnStopIdsUnlessIgnoringEos) {
  FakeStepModel model;
  const std::vector<int32_t> prompt = prompt_of(3, 20);
  const std::vector<int32_t> free_run = FakeStepModel::greedy(prompt, 10, {});
  EngineOptions options = small_engine();
  options.eos_token_ids = {free_run[3]};
  auto engine = Engine::start(model, options);
  SamplingParams params;
  params.max_tokens = 10;
  Outcome out = drain(**(*engine)->submit(prompt, params));
  EXPECT_EQ(out.finish, FinishReason::stop);
  EXPECT_EQ(out.tokens, FakeStepModel::greedy(prompt, 10, {free_run[3]}));
  params.ignore_eos = true;
  out = drain(**(*engine)->submit(prompt, params));
  EXPECT_EQ(out.finish, FinishReason::length);
  EXPECT_EQ(out.tokens, free_run);
  params.stop_token_ids = {free_run[1]};  // explicit stop ids still stop
  out = drain(**(*engine)->submit(prompt, params));
  EXPECT_EQ(out.finish, FinishReason::stop);
  EXPECT_EQ(out.tokens.size(), 2u);
}

TEST(Engine, RejectsBadRequestsAtSubmit) {
  FakeStepModel model;
  model.max_positions = 100;
  auto engine = Engine::start(model, small_engine());
  ASSERT_TRUE(engine.ok());
  EXPECT_EQ((*engine)->limits().max_model_len, 100);
  SamplingParams params;
  params.max_tokens = 50;
  EXPECT_ERROR_CONTAINS((*engine)->submit(prompt_of(1, 51), params), "exceeds the context limit of 100");
  EXPECT_ERROR_CONTAINS((*engine)->submit({}, params), "at least one token");
  EXPECT_ERROR_CONTAINS((*engine)->submit({5, 97}, params), "outside the vocabulary [0, 97)");
  params.top_p = 0.0f;
  EXPECT_ERROR_CONTAINS((*engine)->submit({5}, params), "top_p must be in (0, 1]");
}

TEST(Engine, ContextLimitIsLoweredToTheCacheAndChecked) {
  FakeStepModel model;
  const uint64_t block = model.cache_geometry().block_bytes();
  EngineOptions options = small_engine(8 * model.cache_geometry().slot_bytes() + 40 * block);
  auto engine = Engine::start(model, options);
  ASSERT_TRUE(engine.ok()) << engine.status().message();
  EXPECT_EQ((*engine)->limits().max_model_len, 40 * 16);
  EXPECT_NE((*engine)->limits().max_model_len_source.find("lowered"), std::string::npos);
  options.max_model_len = 41 * 16;
  EXPECT_ERROR_CONTAINS(Engine::start(model, options), "--max-model-len 656 needs more KV");
  EXPECT_ERROR_CONTAINS(Engine::start(model, small_engine(16)), "cannot hold one sequence");
}

TEST(Engine, CancelEndsARequestAndReturnsItsCache) {
  FakeStepModel model;
  auto engine = Engine::start(model, small_engine());
  SamplingParams params;
  params.max_tokens = 100000;
  params.ignore_eos = true;
  auto stream = *(*engine)->submit(prompt_of(5, 300), params);
  auto first = stream->next();
  ASSERT_TRUE(first.has_value());
  stream->cancel();
  const Outcome out = drain(*stream);
  EXPECT_EQ(out.finish, FinishReason::cancelled);
  expect_all_returned(**engine);
}

TEST(Engine, OverloadIsAnErrorNotACrash) {
  FakeStepModel model;
  EngineOptions options = small_engine();
  options.max_queue = 4;
  options.limits = {72, 1};  // one sequence at a time: the rest queue
  auto engine = Engine::start(model, options);
  SamplingParams params;
  params.max_tokens = 200;
  std::vector<std::shared_ptr<RequestStream>> accepted;
  int overloaded = 0;
  for (int i = 0; i < 40; ++i) {
    auto stream = (*engine)->submit(prompt_of(i, 10), params);
    if (stream.ok()) accepted.push_back(*stream);
    else if (stream.status().message().find("overloaded") != std::string::npos) ++overloaded;
    else ADD_FAILURE() << stream.status().message();
  }
  EXPECT_GT(overloaded, 0);
  for (auto& s : accepted) EXPECT_EQ(drain(*s).finish, FinishReason::length);
  expect_all_returned(**engine);
}

TEST(Engine, SoakOfRandomRequestsReturnsEveryBlockAndSlot) {
  FakeStepModel model;
  // A cache of 48 blocks (768 positions) for up to 8 sequences: preemption is frequent.
  EngineOptions options = small_engine(8 * model.cache_geometry().slot_bytes() + 48 * model.cache_geometry().block_bytes());
  options.max_queue = 24;
  auto engine = Engine::start(model, options);
  ASSERT_TRUE(engine.ok()) << engine.status().message();
  struct Live {
    std::shared_ptr<RequestStream> stream;
    std::vector<int32_t> prompt, tokens;
    int64_t max_tokens;
    int64_t cancel_after;  // -1: never
  };
  std::vector<Live> live;
  uint64_t rng = 42;
  int submitted = 0, overloaded = 0, completed = 0, cancelled = 0;
  while (submitted < 400 || !live.empty()) {
    while (submitted < 400 && live.size() < 32) {
      const int64_t length = 1 + static_cast<int64_t>(splitmix64(rng) % 300);
      SamplingParams params;
      params.max_tokens = 1 + static_cast<int64_t>(splitmix64(rng) % 40);
      params.ignore_eos = true;
      std::vector<int32_t> prompt = prompt_of(submitted, length);
      auto stream = (*engine)->submit(prompt, params);
      ++submitted;
      if (!stream.ok()) {
        EXPECT_NE(stream.status().message().find("overloaded"), std::string::npos) << stream.status().message();
        ++overloaded;
        break;
      }
      const int64_t cancel_after = splitmix64(rng) % 5 == 0 ? static_cast<int64_t>(splitmix64(rng) % 10) : -1;
      if (cancel_after == 0) (*stream)->cancel();
      live.push_back({*stream, prompt, {}, params.max_tokens, cancel_after});
    }
    for (size_t i = 0; i < live.size();) {
      Live& l = live[i];
      auto event = l.stream->next(std::chrono::milliseconds(1));
      bool done = false;
      if (event) {
        for (const SampledToken& t : event->tokens) l.tokens.push_back(t.token);
        if (l.cancel_after > 0 && static_cast<int64_t>(l.tokens.size()) >= l.cancel_after) l.stream->cancel();
        if (event->finish) {
          done = true;
          const std::vector<int32_t> expected = FakeStepModel::greedy(l.prompt, l.max_tokens, {});
          if (*event->finish == FinishReason::cancelled) {
            ++cancelled;
            EXPECT_EQ(l.tokens, std::vector<int32_t>(expected.begin(), expected.begin() + static_cast<long>(l.tokens.size())));
          } else {
            ++completed;
            EXPECT_EQ(*event->finish, FinishReason::length) << event->error;
            EXPECT_EQ(l.tokens, expected);
          }
        }
      } else if (l.stream->finished()) {
        done = true;
      }
      if (done) {
        live[i] = std::move(live.back());
        live.pop_back();
      } else {
        ++i;
      }
    }
  }
  EXPECT_GT(completed, 100);
  EXPECT_GT(cancelled, 0);
  expect_all_returned(**engine);
  EXPECT_GT((*engine)->counters().preemptions, 0) << "the soak should exercise preemption";
  std::printf("soak: %d completed, %d cancelled, %d overloaded, %lld preemptions, %lld steps\n", completed, cancelled,
              overloaded, static_cast<long long>((*engine)->counters().preemptions),
              static_cast<long long>((*engine)->counters().steps));
}

}  // namespace
}  // namespace ds
