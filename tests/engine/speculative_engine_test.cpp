// Speculative decoding in the engine with scripted drafters (no trained head needed): an oracle that
// proposes plain decoding's own continuation (every draft accepted), an adversary (none accepted) and
// random mixes, for k = 1..4, alone and in a batch, greedy and seeded sampling, with EOS and max_tokens
// falling inside an accepted run. The output must be plain decoding's, token for token; the counters
// must say how many drafts were verified and accepted.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/drafter.h"
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

enum class Script { oracle, adversary, random_mix };

// Proposes from known full sequences (prompt + plain decoding's output): the true next tokens (oracle),
// a wrong token at every position (adversary), or per position the true one with probability 0.6.
class ScriptedDrafter : public Drafter {
 public:
  ScriptedDrafter(Script script, int64_t vocab, std::vector<std::vector<int32_t>> truths)
      : script_(script), vocab_(vocab), truths_(std::move(truths)), rng_(99) {}
  Status propose(std::span<DraftRequest> requests, HybridCache&) override {
    for (DraftRequest& r : requests) propose(r.tokens, r.k, *r.drafts);
    return {};
  }
  void propose(std::span<const int32_t> tokens, int64_t k, std::vector<int32_t>& drafts) {
    ++calls_;
    const std::vector<int32_t>* truth = nullptr;
    for (const auto& t : truths_)
      if (t.size() >= tokens.size() && std::equal(tokens.begin(), tokens.end(), t.begin())) truth = &t;
    for (int64_t j = 0; j < k; ++j) {
      const size_t at = tokens.size() + static_cast<size_t>(j);
      // Past the known output the oracle has nothing true to say: any token will do.
      const int32_t right = truth && at < truth->size() ? (*truth)[at] : static_cast<int32_t>(j % vocab_);
      const auto wrong = static_cast<int32_t>((right + 1 + static_cast<int64_t>(rng_.next() % static_cast<uint64_t>(vocab_ - 1))) % vocab_);
      const bool take_right = script_ == Script::oracle || (script_ == Script::random_mix && rng_.uniform() < 0.6f);
      drafts.push_back(take_right ? right : wrong);
    }
  }
  int64_t calls() const { return calls_; }

 private:
  Script script_;
  int64_t vocab_;
  std::vector<std::vector<int32_t>> truths_;
  Xoshiro256 rng_;
  int64_t calls_ = 0;
};

class SpeculativeEngine : public ::testing::Test {
 protected:
  test::TempDir tmp_;
  CpuBackend backend_{detect_isa(), 2};
  LoadedModel loaded_;
  std::unique_ptr<Qwen35StepModel> step_model_;

  void SetUp() override {
    test::MicroOptions options;
    options.layers = 8;  // LLLF LLLF
    test::write_micro_checkpoint(tmp_ / "m", options);
    auto loaded = load_model(tmp_ / "m", backend_, ComputeMode::fast);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    loaded_ = std::move(loaded).value();
    step_model_ = std::make_unique<Qwen35StepModel>(*loaded_.model);
  }
  int64_t vocab() const { return loaded_.config.text.vocab_size; }

  struct Outcome {
    std::vector<std::vector<int32_t>> outputs;
    EngineCounters counters;
  };
  // Every prompt submitted at once (a batch), or one after another (alone).
  Outcome run(const std::vector<std::vector<int32_t>>& prompts, const std::vector<SamplingParams>& params, int64_t k,
          Drafter* drafter, bool together, std::vector<int32_t> eos = {}, uint64_t cache_memory = 64 << 20) {
    EngineOptions options;
    options.cache_memory = cache_memory;
    options.limits = {256, 8};
    options.speculative_tokens = k;
    options.drafter = drafter;
    options.eos_token_ids = std::move(eos);
    auto engine = Engine::start(*step_model_, options);
    EXPECT_TRUE(engine.ok()) << engine.status().message();
    Outcome out;
    out.outputs = test::run_requests(**engine, prompts, params, together);
    out.counters = (*engine)->counters();
    return out;
  }
};

TEST_F(SpeculativeEngine, GreedyAndSeededOutputIsPlainDecodingsForEveryDrafterAndK) {
  std::vector<std::vector<int32_t>> prompts;
  std::vector<SamplingParams> params;
  for (int i = 0; i < 5; ++i) {
    prompts.push_back(test::random_tokens(1 + 29 * i, vocab(), 300 + i));  // 1 .. 117 tokens
    SamplingParams p;
    p.max_tokens = 17 + i;
    p.ignore_eos = true;
    if (i % 2 == 1) {  // seeded sampling, with penalties (they see each confirmed token in order)
      p.temperature = 0.8f;
      p.top_p = 0.9f;
      p.presence_penalty = 0.5f;
      p.seed = 11 + i;
    }
    params.push_back(p);
  }
  const Outcome plain = run(prompts, params, 0, nullptr, true);
  const auto truths = test::continued(prompts, plain.outputs);
  for (Script script : {Script::oracle, Script::adversary, Script::random_mix})
  for (int64_t k = 1; k <= 4; ++k)
  for (bool together : {true, false}) {
    SCOPED_TRACE(testing::Message() << "script " << static_cast<int>(script) << ", k = " << k << (together ? ", batch" : ", alone"));
    ScriptedDrafter drafter(script, vocab(), truths);
    const Outcome spec = run(prompts, params, k, &drafter, together);
    EXPECT_EQ(spec.outputs, plain.outputs);
    EXPECT_GT(spec.counters.spec_drafts, 0);
    EXPECT_LE(spec.counters.spec_draft_tokens, k * spec.counters.spec_drafts);
    EXPECT_EQ(spec.counters.generation_tokens, plain.counters.generation_tokens);
    if (script == Script::adversary) {
      EXPECT_EQ(spec.counters.spec_accepted_tokens, 0);
    }
    if (script == Script::random_mix) {
      EXPECT_GT(spec.counters.spec_accepted_tokens, 0);
    }
    if (script == Script::oracle) {
      // Seeded samplers draw plain decoding's stream, so they confirm the oracle's drafts too.
      EXPECT_EQ(spec.counters.spec_accepted_tokens, spec.counters.spec_draft_tokens);
      if (together) {
        EXPECT_LT(spec.counters.steps, plain.counters.steps);
      }
    }
  }
}

// Under cache pressure requests are preempted (their blocks, slot and spare slot given back) and
// computed again later; a preempted request's verifies then write into another spare. The output
// stays plain decoding's, and every slot and spare comes back.
TEST_F(SpeculativeEngine, PreemptedRequestsKeepPlainDecodingsOutput) {
  std::vector<std::vector<int32_t>> prompts;
  std::vector<SamplingParams> params;
  for (int i = 0; i < 4; ++i) {
    prompts.push_back(test::random_tokens(30 + 7 * i, vocab(), 500 + i));
    SamplingParams p;
    p.max_tokens = 120;
    p.ignore_eos = true;
    params.push_back(p);
  }
  // Two sequences' state (each a slot and a spare) and 17 blocks of 16 positions: two prompts fit
  // at once, their generations (up to 171 positions, 11 blocks each) do not.
  const CacheGeometry g = step_model_->cache_geometry();
  const uint64_t budget = 2 * 2 * g.slot_bytes() + 17 * g.block_bytes();
  const auto capacity = size_cache(g, budget, 8, 0, /*spare_slots=*/true);
  ASSERT_TRUE(capacity.ok());
  ASSERT_EQ(capacity->num_slots, 2);
  ASSERT_EQ(capacity->num_blocks, 17);
  const Outcome plain = run(prompts, params, 0, nullptr, true, {}, 64 << 20);
  for (int64_t k : {1, 3}) {
    ScriptedDrafter drafter(Script::random_mix, vocab(), test::continued(prompts, plain.outputs));
    const Outcome spec = run(prompts, params, k, &drafter, true, {}, budget);
    EXPECT_EQ(spec.outputs, plain.outputs) << "k = " << k;
    EXPECT_GT(spec.counters.preemptions, 0) << "k = " << k << ": the budget should force preemption";
    EXPECT_GT(spec.counters.spec_accepted_tokens, 0) << "k = " << k;
  }
}

TEST_F(SpeculativeEngine, StopsInsideAnAcceptedRunEndTheOutputWherePlainDecodingEndsIt) {
  std::vector<std::vector<int32_t>> prompts = {test::random_tokens(40, vocab(), 7), test::random_tokens(3, vocab(), 8)};
  SamplingParams long_run;
  long_run.max_tokens = 30;
  long_run.ignore_eos = true;
  const Outcome free_run = run(prompts, {long_run, long_run}, 0, nullptr, true);
  // EOS: a token of the first request's free run (its first occurrence ends it); max_tokens: 7 and 9,
  // inside a round of an oracle's k = 4 drafts.
  const int32_t eos = free_run.outputs[0][12];
  SamplingParams with_eos, short_run;
  with_eos.max_tokens = 30;
  short_run.max_tokens = 9;
  short_run.ignore_eos = true;
  SamplingParams seven = short_run;
  seven.max_tokens = 7;
  const std::vector<SamplingParams> params = {with_eos, short_run};
  const Outcome plain = run(prompts, params, 0, nullptr, true, {eos});
  ASSERT_LE(plain.outputs[0].size(), 13u);
  ASSERT_EQ(plain.outputs[0].back(), eos);
  ASSERT_EQ(plain.outputs[1].size(), 9u);
  for (int64_t k = 1; k <= 4; ++k) {
    ScriptedDrafter oracle(Script::oracle, vocab(), test::continued(prompts, free_run.outputs));
    EXPECT_EQ(run(prompts, params, k, &oracle, true, {eos}).outputs, plain.outputs) << "k = " << k;
    ScriptedDrafter oracle_alone(Script::oracle, vocab(), test::continued(prompts, free_run.outputs));
    EXPECT_EQ(run({prompts[1]}, {seven}, k, &oracle_alone, true).outputs[0],
              std::vector<int32_t>(free_run.outputs[1].begin(), free_run.outputs[1].begin() + 7))
        << "k = " << k;
  }
}

// A stop string as the engine sees it: a stateful test over the tokens it is told of, here "the
// output ends with these two tokens" (a stop split across tokens). It records what it was asked.
class EndsWithPair : public StopCondition {
 public:
  EndsWithPair(int32_t first, int32_t second) : pair_{first, second} {}
  bool ends_at(int32_t token) override {
    seen.push_back(token);
    return seen.size() >= 2 && seen[seen.size() - 2] == pair_[0] && seen.back() == pair_[1];
  }
  std::vector<int32_t> seen;

 private:
  int32_t pair_[2];
};

TEST_F(SpeculativeEngine, AStopConditionInsideAnAcceptedRunEndsTheOutputThere) {
  const std::vector<std::vector<int32_t>> prompts = {test::random_tokens(21, vocab(), 17)};
  SamplingParams long_run;
  long_run.max_tokens = 30;
  long_run.ignore_eos = true;
  const Outcome free_run = run(prompts, {long_run}, 0, nullptr, true);
  const std::vector<int32_t>& text = free_run.outputs[0];
  size_t end = 2;  // where the pair (text[9], text[10]) first completes: 11 at the latest
  while (!(text[end - 2] == text[9] && text[end - 1] == text[10])) ++end;
  const std::vector<int32_t> expected(text.begin(), text.begin() + static_cast<long>(end));
  for (int64_t k = 0; k <= 4; ++k) {
    SCOPED_TRACE(testing::Message() << "k = " << k);
    SamplingParams params = long_run;
    auto condition = std::make_shared<EndsWithPair>(text[9], text[10]);
    params.stop_condition = condition;
    ScriptedDrafter oracle(Script::oracle, vocab(), test::continued(prompts, free_run.outputs));
    const Outcome stopped = run(prompts, {params}, k, k > 0 ? &oracle : nullptr, true);
    EXPECT_EQ(stopped.outputs[0], expected);
    EXPECT_EQ(condition->seen, expected) << "asked once per token, in order, and not past the stop";
    EXPECT_EQ(stopped.counters.generation_tokens, static_cast<int64_t>(end)) << "nothing emitted past the stop";
  }
}

TEST_F(SpeculativeEngine, OptionsAreChecked) {
  EngineOptions options;
  options.cache_memory = 64 << 20;
  options.speculative_tokens = 2;
  auto no_drafter = Engine::start(*step_model_, options);
  EXPECT_ERROR_CONTAINS(no_drafter, "needs a drafter");
  ScriptedDrafter drafter(Script::oracle, vocab(), {});
  options.drafter = &drafter;
  options.speculative_tokens = kMaxSpeculativeTokens + 1;
  EXPECT_ERROR_CONTAINS(Engine::start(*step_model_, options), "--speculative-tokens must be 0 .. 16");
}

}  // namespace
}  // namespace ds
