// The prefix cache through the engine, over the fake model (whose every forward re-reads the whole
// history from the KV blocks and checks it against the DeltaNet slot, so a wrong shared block or a
// wrong restored state fails the step): a chat's next turn prefills only its new tokens, every
// output equals the model's greedy continuation, and a soak with small caches leaks nothing.
#include <gtest/gtest.h>

#include <thread>

#include "engine/engine.h"
#include "fake_step_model.h"

namespace ds {
namespace {

using test::FakeStepModel;
constexpr int32_t kMessageStart = 90;  // the fake vocabulary's <|im_start|>

std::vector<int32_t> text(uint64_t seed, int64_t length) {
  std::vector<int32_t> out;
  for (int64_t i = 0; i < length; ++i) out.push_back(static_cast<int32_t>(splitmix64(seed) % 80));
  return out;
}

std::vector<int32_t> message(uint64_t seed, int64_t length) {
  std::vector<int32_t> out{kMessageStart};
  const std::vector<int32_t> body = text(seed, length);
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

void append(std::vector<int32_t>& to, const std::vector<int32_t>& more) { to.insert(to.end(), more.begin(), more.end()); }

EngineOptions chat_engine(uint64_t prefix_cache_bytes = 1 << 20) {
  EngineOptions options;
  options.cache_memory = 4 << 20;
  options.prefix_cache_memory = prefix_cache_bytes;
  options.limits = {256, 8};
  options.snapshots.message_start_tokens = {kMessageStart};
  return options;
}

std::vector<int32_t> run(Engine& engine, const std::vector<int32_t>& prompt, int64_t max_tokens, int64_t* cached = nullptr) {
  SamplingParams params;
  params.max_tokens = max_tokens;
  params.ignore_eos = true;
  auto stream = engine.submit(prompt, params);
  EXPECT_TRUE(stream.ok()) << stream.status().message();
  std::vector<int32_t> out;
  while (auto event = (*stream)->next()) {
    for (const SampledToken& t : event->tokens) out.push_back(t.token);
    if (event->finish) {
        EXPECT_EQ(*event->finish, FinishReason::length) << event->error;
      }
  }
  if (cached) *cached = (*stream)->cached_tokens();
  return out;
}

TEST(PrefixCache, EachChatTurnPrefillsOnlyItsNewTokensPlusLessThanAChunk) {
  FakeStepModel model;
  auto engine = Engine::start(model, chat_engine());
  ASSERT_TRUE(engine.ok()) << engine.status().message();
  // The history an OpenAI client sends back each turn: the previous prompt, the answer as the
  // template re-renders it (here: other tokens than were generated, as when reasoning is dropped),
  // then the next user message and the generation prompt.
  std::vector<int32_t> history = message(1, 300);  // system
  int64_t previous_prompt = 0;
  for (int turn = 0; turn < 6; ++turn) {
    const int64_t before = static_cast<int64_t>(history.size());
    if (turn > 0) append(history, message(100 + turn, 150));  // the re-rendered answer
    append(history, message(200 + turn, 40 + 30 * turn));     // user
    append(history, message(300 + turn, 2));                  // "<|im_start|>assistant\n"
    const int64_t new_tokens = static_cast<int64_t>(history.size()) - before;
    const int64_t computed_before = model.tokens_computed.load();
    int64_t cached = -1;
    const std::vector<int32_t> out = run(**engine, history, 20, &cached);
    EXPECT_EQ(out, FakeStepModel::greedy(history, 20, {})) << "turn " << turn;
    const int64_t prefilled = model.tokens_computed.load() - computed_before - 19;  // 19 decode steps
    EXPECT_EQ(prefilled, static_cast<int64_t>(history.size()) - cached) << "turn " << turn;
    if (turn > 0) {
      EXPECT_LE(prefilled, new_tokens + 64) << "turn " << turn << ": cached " << cached << " of " << history.size();
      EXPECT_GE(cached, previous_prompt - 64 - 3) << "turn " << turn;
    }
    previous_prompt = static_cast<int64_t>(history.size());
  }
  const EngineCounters c = (*engine)->counters();
  EXPECT_GT(c.prefix_hits, 0);
  EXPECT_GT(c.snapshots, 0);
  EXPECT_EQ(c.prompt_tokens, c.prefix_queries);
}

TEST(PrefixCache, OffMeansNoHitsAndNoSnapshots) {
  FakeStepModel model;
  auto engine = Engine::start(model, chat_engine(0));
  ASSERT_TRUE(engine.ok());
  const std::vector<int32_t> prompt = message(1, 500);
  int64_t cached = -1;
  EXPECT_EQ(run(**engine, prompt, 5, &cached), FakeStepModel::greedy(prompt, 5, {}));
  EXPECT_EQ(run(**engine, prompt, 5, &cached), FakeStepModel::greedy(prompt, 5, {}));
  EXPECT_EQ(cached, 0);
  const EngineCounters c = (*engine)->counters();
  EXPECT_EQ(c.prefix_queries, 0);
  EXPECT_EQ(c.snapshots, 0);
  EXPECT_EQ(c.cached_blocks, 0);
}

TEST(PrefixCache, TheSamePromptAgainRestartsFromItsLastChunkBoundaryAndAContinuationFromItsEnd) {
  FakeStepModel model;
  auto engine = Engine::start(model, chat_engine());
  ASSERT_TRUE(engine.ok());
  const std::vector<int32_t> prompt = text(5, 1000);
  int64_t cached = -1;
  const auto cold = run(**engine, prompt, 8, &cached);
  EXPECT_EQ(cached, 0);
  EXPECT_EQ(run(**engine, prompt, 8, &cached), cold);
  EXPECT_EQ(cached, 960) << "the end-of-prompt snapshot: the last boundary before the last token";
  // A prompt that continues it (a client sending prompt + completion back) starts where the
  // generation stopped (rule 4): 1,000 + 7 computed tokens (the 8th was sampled, never computed).
  std::vector<int32_t> continued = prompt;
  append(continued, cold);
  EXPECT_EQ(run(**engine, continued, 8, &cached), FakeStepModel::greedy(continued, 8, {}));
  EXPECT_EQ(cached, 1007);
  // And its continuation from where that one stopped, again off the grid, with more text after it.
  append(continued, FakeStepModel::greedy(continued, 8, {}));
  append(continued, text(6, 100));
  EXPECT_EQ(run(**engine, continued, 8, &cached), FakeStepModel::greedy(continued, 8, {}));
  EXPECT_EQ(cached, 1015);
  // The exact lookup is untouched: the first prompt again still hits its own boundary.
  EXPECT_EQ(run(**engine, prompt, 8, &cached), cold);
  EXPECT_EQ(cached, 960);
}

// A decoding request preempted for KV blocks leaves a snapshot where it stopped: once capacity
// returns it restarts there (its blocks survived), computing no token twice.
TEST(PrefixCache, APreemptedRequestRestartsWhereItStopped) {
  FakeStepModel model;
  EngineOptions options = chat_engine();
  options.cache_memory = 2 * model.cache_geometry().slot_bytes() + 24 * model.cache_geometry().block_bytes();
  options.limits = {512, 2};
  auto engine = Engine::start(model, options);
  ASSERT_TRUE(engine.ok()) << engine.status().message();
  ASSERT_EQ((*engine)->limits().capacity.num_blocks, 24);
  SamplingParams long_params, short_params;
  // a needs its 21st block at position 320, when b holds 4 (it is at 60): b is preempted there, and
  // its blocks stay cached, since a needs no more (300 + 36 − 1 computed: 21 blocks).
  long_params.max_tokens = 36;
  short_params.max_tokens = 60;
  long_params.ignore_eos = short_params.ignore_eos = true;
  const std::vector<int32_t> a = text(21, 300), b = text(22, 40);
  // Held until both are in: b joins a's first or second step (a at 300 or 301), never after a has
  // run past the block where it would preempt b.
  model.paused = true;
  auto first = (*engine)->submit(a, long_params);
  auto second = (*engine)->submit(b, short_params);
  model.paused = false;
  ASSERT_TRUE(first.ok() && second.ok());
  auto collect = [](RequestStream& stream) {
    std::vector<int32_t> out;
    while (auto event = stream.next()) {
      for (const SampledToken& t : event->tokens) out.push_back(t.token);
      if (event->finish) {
        EXPECT_EQ(*event->finish, FinishReason::length) << event->error;
      }
    }
    return out;
  };
  EXPECT_EQ(collect(**first), FakeStepModel::greedy(a, 36, {}));
  EXPECT_EQ(collect(**second), FakeStepModel::greedy(b, 60, {}));
  const EngineCounters c = (*engine)->counters();
  EXPECT_GE(c.preemptions, 1) << "24 blocks cannot hold both: the newer must wait";
  EXPECT_EQ(model.tokens_computed.load(), (300 + 35) + (40 + 59)) << "every token computed once";
}

// Chats that share a system prompt, interleaved, through caches too small for all of them: every
// output is still right, hits happen, and at the end every block and slot is free.
TEST(PrefixCache, SoakOfInterleavedChatsWithSmallCachesLeaksNothing) {
  FakeStepModel model;
  const CacheGeometry g = model.cache_geometry();
  EngineOptions options = chat_engine(6 * (g.slot_bytes() + g.block_bytes()));  // 6 snapshots (a state and a tail each)
  options.cache_memory = 8 * model.cache_geometry().slot_bytes() + 160 * model.cache_geometry().block_bytes();
  options.max_queue = 64;
  auto engine = Engine::start(model, options);
  ASSERT_TRUE(engine.ok()) << engine.status().message();
  const std::vector<int32_t> system = message(7, 200);
  std::vector<std::vector<int32_t>> chats(8, system);
  uint64_t rng = 3;
  for (int round = 0; round < 5; ++round) {
    std::vector<std::shared_ptr<RequestStream>> streams;
    SamplingParams params;
    params.max_tokens = 1 + static_cast<int64_t>(splitmix64(rng) % 30);
    params.ignore_eos = true;
    for (size_t c = 0; c < chats.size(); ++c) {
      if (round > 0) append(chats[c], message(splitmix64(rng), 30 + static_cast<int64_t>(splitmix64(rng) % 60)));
      append(chats[c], message(splitmix64(rng), 10 + static_cast<int64_t>(splitmix64(rng) % 80)));
      auto stream = (*engine)->submit(chats[c], params);
      ASSERT_TRUE(stream.ok()) << stream.status().message();
      streams.push_back(*stream);
      if (splitmix64(rng) % 7 == 0) streams.back()->cancel();
    }
    for (size_t c = 0; c < chats.size(); ++c) {
      std::vector<int32_t> out;
      FinishReason finish = FinishReason::error;
      while (auto event = streams[c]->next()) {
        for (const SampledToken& t : event->tokens) out.push_back(t.token);
        if (event->finish) finish = *event->finish;
      }
      const std::vector<int32_t> expected = FakeStepModel::greedy(chats[c], params.max_tokens, {});
      if (finish == FinishReason::cancelled) out.resize(std::min(out.size(), expected.size()));
      else EXPECT_EQ(finish, FinishReason::length);
      EXPECT_EQ(out, std::vector<int32_t>(expected.begin(), expected.begin() + static_cast<long>(out.size())))
          << "round " << round << " chat " << c;
    }
  }
  EngineCounters c;
  for (int i = 0; i < 200; ++i) {
    c = (*engine)->counters();
    if (c.running == 0 && c.waiting == 0 && c.blocks_used == 0 && c.slots_used == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(c.blocks_used, 0);
  EXPECT_EQ(c.slots_used, 0);
  EXPECT_GT(c.prefix_hits, 0);
  EXPECT_GT(c.snapshot_evictions, 0) << "the pool was meant to be too small";
  EXPECT_LE(c.snapshots, 6);
  EXPECT_GT(c.preemptions + c.block_evictions, 0) << "the KV pool was meant to be too small";
}

}  // namespace
}  // namespace ds
