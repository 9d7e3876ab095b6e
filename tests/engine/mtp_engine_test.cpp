// The checkpoint's MTP head as the engine's drafter, on a real micro checkpoint with a random head:
// output with the head on is plain decoding's token for token (k = 1..4, greedy and seeded, alone and
// in a batch of different prompt lengths, stops inside accepted runs, prefix-cache hits), and the
// drafts it proposes are the head's own for the committed prefix — the teacher-forced pass over every
// committed pair, then the chain — whatever the history of accepts and rejects (so its KV is in sync).
// With a token map (--speculative-token-map) the drafts are the map's ids — the head's argmax over
// the gathered rows, mapped — and output is still plain decoding's.
// Random weights accept almost nothing, so a head whose drafts are replaced by the true continuation
// after it ran (forced acceptance) exercises accepted runs through the same path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "engine/engine.h"
#include "engine/mtp_drafter.h"
#include "engine/qwen35_step_model.h"
#include "kernels/cpu/cpu_backend.h"
#include "micro_checkpoint.h"
#include "model/model_loader.h"
#include "model/sequence_runner.h"
#include "stream_tokens.h"
#include "test_util.h"
#include "util/random.h"

namespace ds {
namespace {

using test::drain_tokens;

int32_t argmax(const std::vector<float>& row) {
  return static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
}

// What the head's drafts are replaced with after it ran: nothing (the head's own), the true
// continuation (every draft right), per position the true one with probability 0.6, or wrong ones for
// the first 8 generated tokens and right ones after (adaptive k drops to plain decoding, then returns).
enum class Force { none, oracle, mix, late };

class MtpEngine : public ::testing::Test {
 protected:
  test::TempDir tmp_;
  CpuBackend backend_{detect_isa(), 2};
  LoadedModel loaded_;
  std::unique_ptr<Qwen35StepModel> plain_model_, mtp_model_;

  void SetUp() override {
    test::MicroOptions options;
    options.layers = 8;  // LLLF LLLF
    RandomCheckpointOptions writer;
    writer.with_mtp = true;
    test::write_micro_checkpoint(tmp_ / "drawn", options, writer);
    // The drawn head's attention is too weak (weights N(0, 0.02) beside a residual of order 1) for its
    // drafts to depend on what its KV holds; 8× stronger projections make a head whose KV matters, so
    // a KV out of sync changes drafts and fails DraftsAreTheHeadsOwnForTheCommittedPrefix.
    test::rewrite_checkpoint(tmp_ / "drawn", tmp_ / "m", [](std::vector<test::EditableTensor>& tensors) {
      for (test::EditableTensor& t : tensors) {
        if (t.decl.name.find("mtp.layers.0.self_attn.") != 0 || t.decl.name.find("_proj.weight") == std::string::npos) continue;
        ASSERT_EQ(t.decl.dtype, DType::BF16) << t.decl.name;
        for (size_t i = 0; i + 1 < t.bytes.size(); i += 2) {  // × 8: exact in bf16
          uint16_t bits;
          std::memcpy(&bits, t.bytes.data() + i, 2);
          uint32_t wide = static_cast<uint32_t>(bits) << 16;
          float value;
          std::memcpy(&value, &wide, 4);
          value *= 8.0f;
          std::memcpy(&wide, &value, 4);
          bits = static_cast<uint16_t>(wide >> 16);
          std::memcpy(t.bytes.data() + i, &bits, 2);
        }
      }
    });
    auto loaded = load_model(tmp_ / "m", backend_, ComputeMode::fast);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    loaded_ = std::move(loaded).value();
    ASSERT_TRUE(loaded_.model->has_mtp());
    plain_model_ = std::make_unique<Qwen35StepModel>(*loaded_.model);
    mtp_model_ = std::make_unique<Qwen35StepModel>(*loaded_.model, default_kv_dtype(*loaded_.model), /*with_mtp=*/true);
  }
  int64_t vocab() const { return loaded_.config.text.vocab_size; }
  // n distinct ids of the vocabulary in a random order (a token map, most frequent first).
  std::vector<int32_t> token_map(int64_t n, uint64_t seed) const {
    std::vector<int32_t> ids(static_cast<size_t>(vocab()));
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(i);
    Xoshiro256 rng(seed);
    for (size_t i = ids.size() - 1; i > 0; --i) std::swap(ids[i], ids[rng.next() % (i + 1)]);
    ids.resize(static_cast<size_t>(n));
    return ids;
  }

  struct Outcome {
    std::vector<std::vector<int32_t>> outputs;
    EngineCounters counters;
  };
  // Plain decoding (k = 0, no head) or the head with k drafts; every prompt at once, or one after another.
  // Adaptive k runs at the default costs unless `measure_costs` (timings would make its choices, and
  // the counts some tests check, depend on the machine's load).
  Outcome run(const std::vector<std::vector<int32_t>>& prompts, const std::vector<SamplingParams>& params, int64_t k,
              MtpDrafter* drafter, bool together, std::vector<int32_t> eos = {}, uint64_t prefix_cache = 0,
              bool adaptive = true, bool measure_costs = false) {
    EngineOptions options;
    options.adaptive_drafts = adaptive;
    options.measure_draft_costs = measure_costs;
    options.cache_memory = 64 << 20;
    options.prefix_cache_memory = prefix_cache;
    options.limits = {256, 8};
    options.speculative_tokens = k;
    options.drafter = drafter;
    options.eos_token_ids = std::move(eos);
    auto engine = Engine::start(k > 0 ? *mtp_model_ : *plain_model_, options);
    EXPECT_TRUE(engine.ok()) << engine.status().message();
    Outcome out;
    out.outputs = test::run_requests(**engine, prompts, params, together);
    out.counters = (*engine)->counters();
    return out;
  }

  std::unique_ptr<MtpDrafter> drafter() {
    auto made = MtpDrafter::create(*mtp_model_);
    EXPECT_TRUE(made.ok()) << made.status().message();
    return made.ok() ? std::move(made).value() : nullptr;
  }
  // Replaces the head's drafts per `force`, from known full sequences (prompt + plain decoding's output).
  static void force(MtpDrafter& drafter, Force how, std::vector<std::vector<int32_t>> truths, int64_t vocab,
                    uint64_t seed = 5) {
    if (how == Force::none) return;
    auto rng = std::make_shared<Xoshiro256>(seed);
    drafter.replace_drafts = [how, truths = std::move(truths), vocab, rng](DraftRequest& r) {
      const std::vector<int32_t>* truth = nullptr;
      for (const auto& t : truths)
        if (t.size() >= r.tokens.size() && std::equal(r.tokens.begin(), r.tokens.end(), t.begin())) truth = &t;
      r.drafts->clear();
      for (int64_t j = 0; j < r.k; ++j) {
        const size_t at = r.tokens.size() + static_cast<size_t>(j);
        const int32_t right = truth && at < truth->size() ? (*truth)[at] : 0;
        const bool take_right = how == Force::oracle || (how == Force::mix && rng->uniform() < 0.6f) ||
                                (how == Force::late && truth && at >= truth->size() - 12);
        r.drafts->push_back(take_right ? right : static_cast<int32_t>((right + 1 + j) % vocab));
      }
    };
  }
};

TEST_F(MtpEngine, OutputWithTheHeadIsPlainDecodingsForEveryKAloneAndBatched) {
  std::vector<std::vector<int32_t>> prompts;
  std::vector<SamplingParams> params;
  for (int64_t length : {1, 30, 64, 65, 130}) {
    prompts.push_back(test::random_tokens(length, vocab(), 400 + static_cast<uint64_t>(length)));
    SamplingParams p;
    p.max_tokens = 14 + static_cast<int64_t>(params.size());
    p.ignore_eos = true;
    if (params.size() % 2 == 1) {  // seeded sampling with a penalty
      p.temperature = 0.8f;
      p.top_p = 0.9f;
      p.presence_penalty = 0.5f;
      p.seed = 21 + params.size();
    }
    params.push_back(p);
  }
  const Outcome plain = run(prompts, params, 0, nullptr, true);
  const auto truths = test::continued(prompts, plain.outputs);
  for (bool adaptive : {false, true})
  for (Force how : {Force::none, Force::oracle, Force::mix})
  for (int64_t k = 1; k <= 4; ++k)
  for (bool together : {true, false}) {
    SCOPED_TRACE(testing::Message() << "force " << static_cast<int>(how) << ", k = " << k << (together ? ", batch" : ", alone")
                                    << (adaptive ? ", adaptive" : ", fixed k"));
    auto head = drafter();
    force(*head, how, truths, vocab());
    const Outcome spec = run(prompts, params, k, head.get(), together, {}, 0, adaptive);
    EXPECT_EQ(spec.outputs, plain.outputs);
    EXPECT_GT(spec.counters.spec_drafts, 0);
    EXPECT_LE(spec.counters.spec_draft_tokens, k * spec.counters.spec_drafts);
    EXPECT_EQ(spec.counters.generation_tokens, plain.counters.generation_tokens);
    // Per position: a round's draft j counts when drafts 0 .. j were accepted.
    int64_t per_position = 0;
    for (size_t j = 0; j < spec.counters.spec_accepted_per_position.size(); ++j) {
      per_position += spec.counters.spec_accepted_per_position[j];
      if (j > 0) {
        EXPECT_LE(spec.counters.spec_accepted_per_position[j], spec.counters.spec_accepted_per_position[j - 1]);
      }
      if (static_cast<int64_t>(j) >= k) {
        EXPECT_EQ(spec.counters.spec_accepted_per_position[j], 0);
      }
    }
    EXPECT_EQ(per_position, spec.counters.spec_accepted_tokens);
    if (how == Force::oracle) {
      EXPECT_EQ(spec.counters.spec_accepted_tokens, spec.counters.spec_draft_tokens);
      if (together) {
        EXPECT_LT(spec.counters.steps, plain.counters.steps);
      }
    }
    if (how == Force::none && !adaptive) {  // a random head is (almost) never right: k drafts every round
      EXPECT_GT(spec.counters.spec_draft_tokens, 20 * k);
    }
    if (how == Force::none && adaptive) {  // ... so adaptive k mostly decodes plainly, retrying now and then
      EXPECT_LT(spec.counters.spec_draft_tokens, plain.counters.generation_tokens / 3);
    }
    if (how == Force::mix) {
      EXPECT_GT(spec.counters.spec_accepted_tokens, 0);
    }
  }
}

// The engine times its steps into adaptive k's costs (draft_cost_meter.h; its arithmetic is tested
// there): on, they leave the prior and stay finite and in bounds, and the output is plain decoding's
// whatever they are; off, they stay at the prior.
TEST_F(MtpEngine, AdaptiveKsCostsAreMeasuredFromTheStepsOrKeptAtThePrior) {
  const std::vector<std::vector<int32_t>> prompts = {test::random_tokens(30, vocab(), 3)};
  SamplingParams p;
  p.max_tokens = 40;
  p.ignore_eos = true;
  const Outcome plain = run(prompts, {p}, 0, nullptr, true);
  const DraftCosts prior;
  for (const bool measure : {false, true}) {
    auto head = drafter();
    force(*head, Force::mix, test::continued(prompts, plain.outputs), vocab());
    const Outcome spec = run(prompts, {p}, 3, head.get(), true, {}, 0, /*adaptive=*/true, measure);
    EXPECT_EQ(spec.outputs, plain.outputs) << (measure ? "measured" : "prior");
    const DraftCosts got = spec.counters.draft_costs;
    if (!measure) {
      EXPECT_EQ(got.verify_row, prior.verify_row);
      EXPECT_EQ(got.draft_step, prior.draft_step);
      continue;
    }
    EXPECT_GT(spec.counters.spec_drafts, 0);
    EXPECT_TRUE(got.verify_row != prior.verify_row || got.draft_step != prior.draft_step) << "nothing was measured";
    for (const double cost : {got.verify_row, got.draft_step}) {
      EXPECT_GE(cost, 0);
      EXPECT_LE(cost, DraftCostMeter::kMaxCost);
    }
  }
  // Drafts that are always right would verify every round, and the meter would never see the plain
  // steps it measures a verify against: the engine makes the first kMinPlainSteps decode steps plain.
  for (const bool measure : {false, true}) {
    auto head = drafter();
    force(*head, Force::oracle, test::continued(prompts, plain.outputs), vocab());
    const Outcome spec = run(prompts, {p}, 3, head.get(), true, {}, 0, /*adaptive=*/true, measure);
    EXPECT_EQ(spec.outputs, plain.outputs);
    const int64_t plain_decodes = spec.counters.generation_tokens - 1 /* the prefill's */ - spec.counters.spec_drafts -
                                  spec.counters.spec_accepted_tokens;
    // (The costs the micro model's timings give may stop its drafting too: plain steps can be more.)
    if (measure) {
      EXPECT_EQ(spec.counters.cost_meter_plain_steps, DraftCostMeter::kMinPlainSteps) << "fewer than 64 verifies: no recalibration";
      EXPECT_GE(plain_decodes, DraftCostMeter::kMinPlainSteps);
    } else {
      EXPECT_EQ(spec.counters.cost_meter_plain_steps, 0);
      EXPECT_LE(plain_decodes, 1) << "at the prior's costs only a last step max_tokens leaves no room to draft in";
    }
  }
}

TEST_F(MtpEngine, StopsInsideAnAcceptedRunEndTheOutputWherePlainDecodingEndsIt) {
  const std::vector<std::vector<int32_t>> prompts = {test::random_tokens(40, vocab(), 7), test::random_tokens(3, vocab(), 8)};
  SamplingParams long_run;
  long_run.max_tokens = 30;
  long_run.ignore_eos = true;
  const Outcome free_run = run(prompts, {long_run, long_run}, 0, nullptr, true);
  // EOS: a token of the first request's free run (its first occurrence ends it); max_tokens 9: inside
  // a round of k = 4 accepted drafts.
  const int32_t eos = free_run.outputs[0][12];
  SamplingParams with_eos, short_run;
  with_eos.max_tokens = 30;
  short_run.max_tokens = 9;
  short_run.ignore_eos = true;
  const std::vector<SamplingParams> params = {with_eos, short_run};
  const Outcome plain = run(prompts, params, 0, nullptr, true, {eos});
  ASSERT_LE(plain.outputs[0].size(), 13u);
  ASSERT_EQ(plain.outputs[0].back(), eos);
  ASSERT_EQ(plain.outputs[1].size(), 9u);
  for (int64_t k = 1; k <= 4; ++k) {
    auto head = drafter();
    force(*head, Force::oracle, test::continued(prompts, free_run.outputs), vocab());
    const Outcome spec = run(prompts, params, k, head.get(), true, {eos});
    EXPECT_EQ(spec.outputs, plain.outputs) << "k = " << k;
    EXPECT_EQ(spec.counters.spec_accepted_tokens, spec.counters.spec_draft_tokens) << "k = " << k;
  }
}

TEST_F(MtpEngine, PrefixCacheHitsStayExact) {
  // The second prompt shares the first's first 128 tokens: it starts from the cache, whose blocks
  // carry the head's KV entries made with the first prompt's next tokens (acceptance only).
  const std::vector<int32_t> shared = test::random_tokens(150, vocab(), 31);
  std::vector<int32_t> other(shared.begin(), shared.begin() + 140);
  const std::vector<int32_t> tail = test::random_tokens(9, vocab(), 32);
  other.insert(other.end(), tail.begin(), tail.end());
  SamplingParams p;
  p.max_tokens = 12;
  p.ignore_eos = true;
  const Outcome plain = run({shared, other}, {p, p}, 0, nullptr, false, {}, 64 << 20);
  ASSERT_GT(plain.counters.prefix_hits, 0);
  for (int64_t k : {1, 3}) {
    auto head = drafter();
    const Outcome spec = run({shared, other}, {p, p}, k, head.get(), false, {}, 64 << 20);
    EXPECT_EQ(spec.outputs, plain.outputs) << "k = " << k;
    EXPECT_EQ(spec.counters.prefix_hits, plain.counters.prefix_hits) << "k = " << k;
  }
}

TEST_F(MtpEngine, WithATokenMapOutputIsPlainDecodingsAndDraftsAreTheMapsIds) {
  std::vector<std::vector<int32_t>> prompts;
  for (int64_t length : {1, 30, 65}) prompts.push_back(test::random_tokens(length, vocab(), 600 + static_cast<uint64_t>(length)));
  SamplingParams p;
  p.max_tokens = 16;
  p.ignore_eos = true;
  const std::vector<SamplingParams> params(prompts.size(), p);
  const Outcome plain = run(prompts, params, 0, nullptr, true);
  const std::vector<int32_t> map = token_map(50, 9);  // not a multiple of the head's panel rows
  for (int64_t n : {0, 20})  // the whole map, its first 20
  for (Force how : {Force::none, Force::mix})
  for (int64_t k = 1; k <= 3; ++k) {
    SCOPED_TRACE(testing::Message() << "the map's first " << (n > 0 ? n : 50) << ", force " << static_cast<int>(how)
                                    << ", k = " << k);
    auto made = MtpDrafter::create(*mtp_model_, DraftVocab{n, map});
    ASSERT_TRUE(made.ok()) << made.status().message();
    auto head = std::move(made).value();
    EXPECT_EQ(mtp_model_->draft_vocab_size(), n > 0 ? n : 50);
    force(*head, how, test::continued(prompts, plain.outputs), vocab());
    const std::vector<int32_t> allowed(map.begin(), map.begin() + (n > 0 ? n : 50));
    int64_t drafts = 0;
    auto forced = head->replace_drafts;
    head->replace_drafts = [&](DraftRequest& r) {  // the head's own drafts, before any forcing
      for (int32_t d : *r.drafts) {
        EXPECT_NE(std::find(allowed.begin(), allowed.end(), d), allowed.end()) << "draft " << d << " is not in the map";
        ++drafts;
      }
      if (forced) forced(r);
    };
    const Outcome spec = run(prompts, params, k, head.get(), true, {}, 0, /*adaptive=*/false);
    EXPECT_EQ(spec.outputs, plain.outputs);
    EXPECT_GT(drafts, 10);
    if (how == Force::mix) {
      EXPECT_GT(spec.counters.spec_accepted_tokens, 0);
    }
  }
}

TEST_F(MtpEngine, ADraftVocabularyPastTheTokenMapOrAMapReplacedUnderItsDrafterIsAnError) {
  const std::vector<int32_t> map = token_map(60, 4);
  EXPECT_ERROR_CONTAINS(MtpDrafter::create(*mtp_model_, DraftVocab{61, map}),
                        "draft vocabulary of 61 tokens: expected 1 .. 60 (the token map's ids), or 0 for all of them");
  auto mapped = MtpDrafter::create(*mtp_model_, DraftVocab{0, map});
  ASSERT_TRUE(mapped.ok()) << mapped.status().message();
  EXPECT_EQ(mtp_model_->draft_vocab_size(), 60);
  ASSERT_TRUE(MtpDrafter::create(*mtp_model_).ok());  // a drafter without a map drops the gathered head
  EXPECT_EQ(mtp_model_->draft_vocab_size(), vocab());
  // The first drafter's map no longer matches the head's logits: an error, not a read past the map.
  HybridCache cache(mtp_model_->cache_geometry(), CacheCapacity{4, 1, 0}, backend_);
  for (const Status& status : {(*mapped)->propose({}, cache), (*mapped)->computed({}, cache)})
    EXPECT_NE(status.message().find("draft vocabulary changed under its drafter: 512 logits, 60 ids"), std::string::npos)
        << status.message();
}

TEST_F(MtpEngine, DraftsAreTheHeadsOwnForTheCommittedPrefix) {
  // Three prompts batched, k = 3, accepted runs of every length (forced 60% per position): every
  // proposal, before it is replaced, must equal a fresh teacher-forced head over the committed prefix
  // — the main model over the prompt (one chunked call) and each generated token (one decode each),
  // the head over every committed pair, then two chained steps on its own argmax.
  const std::vector<std::vector<int32_t>> prompts = {test::random_tokens(5, vocab(), 51),
                                                     test::random_tokens(64, vocab(), 52),
                                                     test::random_tokens(100, vocab(), 53)};
  SamplingParams p;
  p.max_tokens = 20;
  p.ignore_eos = true;
  const std::vector<SamplingParams> params(3, p);
  const Outcome plain = run(prompts, params, 0, nullptr, true);
  constexpr int64_t k = 3;
  struct Variant {
    Force how;
    int64_t draft_vocab;  // 0: the whole vocabulary (or token map)
    std::vector<int32_t> map;  // the head's logit i is map[i]; empty: i
    const char* what;
  };
  for (const Variant& variant : {Variant{Force::mix, 0, {}, "60% right"},
                                 Variant{Force::late, 0, {}, "wrong, then right (rows kept back while decoding plainly)"},
                                 Variant{Force::mix, 64, {}, "60% right, a draft vocabulary of 64 tokens"},
                                 Variant{Force::mix, 45, token_map(60, 3), "60% right, a token map's first 45 ids"}}) {
  SCOPED_TRACE(variant.what);
  const Force how = variant.how;
  auto made = MtpDrafter::create(*mtp_model_, DraftVocab{variant.draft_vocab, variant.map});
  ASSERT_TRUE(made.ok()) << made.status().message();
  auto head = std::move(made).value();
  force(*head, how, test::continued(prompts, plain.outputs), vocab());
  struct Proposal {
    std::vector<int32_t> tokens, drafts;
  };
  std::vector<Proposal> proposals;
  auto forced = head->replace_drafts;
  head->replace_drafts = [&](DraftRequest& r) {
    proposals.push_back({std::vector<int32_t>(r.tokens.begin(), r.tokens.end()), *r.drafts});
    forced(r);
  };
  const Outcome spec = run(prompts, params, k, head.get(), true);
  ASSERT_EQ(spec.outputs, plain.outputs);
  ASSERT_GT(spec.counters.spec_accepted_tokens, 0);
  ASSERT_GT(proposals.size(), 10u);

  Qwen35Model& model = *loaded_.model;
  const int64_t H = loaded_.config.text.hidden_size;
  for (const Proposal& proposal : proposals) {
    const auto total = static_cast<int64_t>(proposal.tokens.size());
    ASSERT_FALSE(proposal.drafts.empty());
    if (variant.draft_vocab > 0 && variant.map.empty()) {
      for (int32_t d : proposal.drafts) EXPECT_LT(d, variant.draft_vocab);
    }
    // The head's logits are the draft vocabulary's: index i is the token map's i-th id.
    const auto token = [&](int32_t index) { return variant.map.empty() ? index : variant.map[static_cast<size_t>(index)]; };
    int64_t prompt_len = 0;
    for (const auto& prompt : prompts)
      if (prompt.size() <= proposal.tokens.size() && std::equal(prompt.begin(), prompt.end(), proposal.tokens.begin()))
        prompt_len = static_cast<int64_t>(prompt.size());
    ASSERT_GT(prompt_len, 0);
    SequenceRunner runner(model, total + k, total, default_kv_dtype(model), kKvBlockSize, /*with_mtp=*/true);
    std::vector<float> no_logits, hidden, h;
    const std::span<const int32_t> tokens(proposal.tokens);
    ASSERT_TRUE(runner.feed(tokens.first(static_cast<size_t>(prompt_len)), LogitsRows::none, no_logits, LogitsRows::all, hidden).ok());
    for (int64_t i = prompt_len; i < total - 1; ++i) {
      ASSERT_TRUE(runner.feed(tokens.subspan(static_cast<size_t>(i), 1), LogitsRows::none, no_logits, LogitsRows::all, h).ok());
      hidden.insert(hidden.end(), h.begin(), h.end());
    }
    ASSERT_EQ(static_cast<int64_t>(hidden.size()), (total - 1) * H);
    std::vector<float> logits, g;
    ASSERT_TRUE(runner.mtp(hidden, tokens.subspan(1), 0, 0, LogitsRows::last, logits, g).ok());
    ASSERT_EQ(static_cast<int64_t>(logits.size()), mtp_model_->draft_vocab_size());
    std::vector<int32_t> expected = {token(argmax(logits))};
    while (static_cast<int64_t>(expected.size()) < static_cast<int64_t>(proposal.drafts.size())) {
      const std::vector<float> prev = g;
      const int32_t last = expected.back();
      const auto step = static_cast<int64_t>(expected.size());
      ASSERT_TRUE(runner.mtp(prev, std::span(&last, 1), total - 2 + step, step, LogitsRows::last, logits, g).ok());
      expected.push_back(token(argmax(logits)));
    }
    EXPECT_EQ(proposal.drafts, expected) << "after " << total << " tokens (prompt " << prompt_len << ")";
  }
  if (how == Force::late) {  // plain steps between the rounds: rows were kept back, then passed together
    const int64_t plain_decodes = spec.counters.generation_tokens - 3 /* the prefills' */ - spec.counters.spec_drafts -
                                  spec.counters.spec_accepted_tokens;
    EXPECT_GE(plain_decodes, 9);
  }
  }
}

TEST_F(MtpEngine, CacheGeometryCountsTheHeadsLayerAndAHeadIsRequired) {
  const CacheGeometry plain = plain_model_->cache_geometry(), with_head = mtp_model_->cache_geometry();
  EXPECT_EQ(with_head.attention_layers, plain.attention_layers + 1);
  EXPECT_EQ(with_head.block_bytes() * static_cast<uint64_t>(plain.attention_layers),
            plain.block_bytes() * static_cast<uint64_t>(with_head.attention_layers));
  EXPECT_NE(with_head.identity(), plain.identity());  // prefix-cache files of one never load in the other
  EXPECT_ERROR_CONTAINS(MtpDrafter::create(*plain_model_), "has none (no mtp.* tensors)");
  EXPECT_ERROR_CONTAINS(MtpDrafter::create(*mtp_model_, 40), "expected a multiple of");  // of 32 (panels) or 16 (row-major)
  EXPECT_ERROR_CONTAINS(MtpDrafter::create(*mtp_model_, 544), "expected 1 .. 512");
  ASSERT_TRUE(MtpDrafter::create(*mtp_model_, 96).ok());
  EXPECT_EQ(mtp_model_->draft_vocab_size(), 96);
  ASSERT_TRUE(MtpDrafter::create(*mtp_model_).ok());
  EXPECT_EQ(mtp_model_->draft_vocab_size(), vocab());

  test::MicroOptions options;
  options.layers = 4;
  test::write_micro_checkpoint(tmp_ / "no_head", options);
  auto loaded = load_model(tmp_ / "no_head", backend_, ComputeMode::fast);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  Qwen35StepModel asked(*loaded->model, default_kv_dtype(*loaded->model), /*with_mtp=*/true);
  EXPECT_EQ(asked.num_mtp_layers(), 0);
  EXPECT_ERROR_CONTAINS(MtpDrafter::create(asked), "has none (no mtp.* tensors)");
}

}  // namespace
}  // namespace ds
