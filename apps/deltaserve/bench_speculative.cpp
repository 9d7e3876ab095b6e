// Speculative bench: both engines run over step models wrapped in a timer, so the verify, the head's
// passes and chained steps, and the DeltaNet replay are timed where the engine runs them.
#include "bench_speculative.h"

#include <chrono>
#include <initializer_list>
#include <memory>

#include "engine/mtp_drafter.h"
#include "engine_options.h"
#include "timed_step_model.h"
#include "util/elapsed.h"
#include "util/random.h"

namespace ds::app {
namespace {

using Clock = std::chrono::steady_clock;

struct Generation {
  std::vector<int32_t> tokens;
  double decode_s = 0;  // from the first token to the last: decode only
};

// Decode tok/s over several generations: the tokens after each one's first, over their decode time.
double decode_rate(std::initializer_list<const Generation*> runs) {
  double tokens = 0, seconds = 0;
  for (const Generation* g : runs) tokens += static_cast<double>(g->tokens.size()) - 1, seconds += g->decode_s;
  return seconds > 0 ? tokens / seconds : 0;
}

Result<Generation> generate(Engine& engine, const std::vector<int32_t>& prompt, int64_t decode_tokens) {
  SamplingParams params;
  params.max_tokens = decode_tokens;
  params.ignore_eos = true;
  DS_ASSIGN_OR_RETURN(auto stream, engine.submit(prompt, params));
  Generation out;
  Clock::time_point first, last;
  while (auto event = stream->next()) {
    if (event->finish && *event->finish == FinishReason::error) return Status::error(event->error);
    if (event->tokens.empty()) continue;
    last = Clock::now();
    if (out.tokens.empty()) first = last;
    for (const SampledToken& t : event->tokens) out.tokens.push_back(t.token);
  }
  out.decode_s = std::chrono::duration<double>(last - first).count();
  return out;
}

}  // namespace

Result<std::vector<SpeculativeResult>> run_speculative(StepModel& plain, StepModel& with_head, EngineOptions options,
                                                       const DraftVocab& draft_vocab, const std::vector<double>& acceptances,
                                                       int64_t prompt_tokens,
                                                       int64_t decode_tokens, uint64_t seed) {
  const int64_t k = options.speculative_tokens, vocab = plain.vocab_size();
  if (k < 1) return Status::error("--draft-acceptance needs --speculative-tokens K of at least 1, found 0");
  if (decode_tokens < 2) return Status::errorf("--decode-tokens must be at least 2 here, found ", decode_tokens);
  TimedStepModel timed_plain(plain), timed_head(with_head);
  DS_ASSIGN_OR_RETURN(auto drafter, MtpDrafter::create(timed_head, draft_vocab));
  use_head_costs(options, timed_head);
  options.prefix_cache_memory = 0;  // every run computes its prompt; decode is what is measured
  EngineOptions plain_options = options;
  plain_options.speculative_tokens = 0;
  plain_options.drafter = nullptr;
  options.drafter = drafter.get();
  DS_ASSIGN_OR_RETURN(auto plain_engine, Engine::start(timed_plain, plain_options));
  DS_ASSIGN_OR_RETURN(auto spec_engine, Engine::start(timed_head, options));

  Xoshiro256 rng(seed);
  std::vector<int32_t> prompt(static_cast<size_t>(prompt_tokens));
  for (auto& id : prompt) id = static_cast<int32_t>(rng.next() % static_cast<uint64_t>(vocab));
  // Warm-up of both paths (first touches of buffers and caches), then plain decoding's continuation:
  // what the drafter proposes when it proposes right.
  DS_TRY(generate(*plain_engine, prompt, 4).status());
  DS_TRY(generate(*spec_engine, prompt, 4).status());
  DS_ASSIGN_OR_RETURN(const Generation truth, generate(*plain_engine, prompt, decode_tokens));

  std::vector<SpeculativeResult> results;
  for (double p : acceptances) {

    drafter->replace_drafts = [&](DraftRequest& r) {
      const auto done = static_cast<int64_t>(r.tokens.size()) - prompt_tokens;  // generated so far
      r.drafts->clear();
      for (int64_t j = 0; j < r.k && done + j < static_cast<int64_t>(truth.tokens.size()); ++j) {
        const int32_t right = truth.tokens[static_cast<size_t>(done + j)];
        r.drafts->push_back(rng.uniform() < p ? right : static_cast<int32_t>((right + 1) % vocab));
      }
    };
    // Plain, speculative, speculative, plain: the sums of each pair cancel a drift of the machine's
    // speed that is linear over the four runs (single runs of ~10 s swing by ±10–20% on a shared machine).
    const CallTimes plain_before = timed_plain.times(), head_before = timed_head.times();
    const EngineCounters counters_before = spec_engine->counters();
    Generation runs[4];
    for (int run = 0; run < 4; ++run) {
      Engine& engine = run == 0 || run == 3 ? *plain_engine : *spec_engine;
      DS_ASSIGN_OR_RETURN(runs[run], generate(engine, prompt, decode_tokens));
      if (runs[run].tokens != truth.tokens)
        return Status::internal(&engine == plain_engine.get() ? "plain" : "speculative", " decoding at P = ", p,
                                " gave other tokens than the first plain run");
    }
    const CallTimes plain_times = timed_plain.times().minus(plain_before);
    const CallTimes head_times = timed_head.times().minus(head_before);
    const EngineCounters counters = spec_engine->counters();

    SpeculativeResult r;
    r.acceptance = p;
    r.plain_tokens_per_s = decode_rate({&runs[0], &runs[3]});
    r.spec_tokens_per_s = decode_rate({&runs[1], &runs[2]});
    r.rounds = counters.spec_drafts - counters_before.spec_drafts;
    const int64_t drafted = counters.spec_draft_tokens - counters_before.spec_draft_tokens;
    const int64_t accepted = counters.spec_accepted_tokens - counters_before.spec_accepted_tokens;
    r.accepted_fraction = drafted > 0 ? static_cast<double>(accepted) / static_cast<double>(drafted) : 0;
    r.tokens_per_round = r.rounds > 0 ? static_cast<double>(r.rounds + accepted) / static_cast<double>(r.rounds) : 0;
    r.drafts_per_round = r.rounds > 0 ? static_cast<double>(drafted) / static_cast<double>(r.rounds) : 0;
    auto mean = [](double total, int64_t n) { return n > 0 ? total / static_cast<double>(n) : 0.0; };
    r.decode_step_s = mean(plain_times.decode_s, plain_times.decodes);
    r.verify_s = mean(head_times.verify_s, head_times.verifies);
    r.head_pass_s = mean(head_times.pass_s, head_times.passes);
    r.head_step_s = mean(head_times.chain_s, head_times.chains);
    r.draft_per_round_s = mean(head_times.pass_s + head_times.chain_s, r.rounds);
    r.replay_per_round_s = mean(head_times.replay_s, r.rounds);
    r.measured_costs = counters.draft_costs;
    results.push_back(r);
  }
  drafter->replace_drafts = nullptr;
  return results;
}

}  // namespace ds::app
