// Speculative bench: both engines run over step models wrapped in a timer, so the verify, the head's
// passes and chained steps, and the DeltaNet replay are timed where the engine runs them.
#include "bench_speculative.h"

#include <chrono>
#include <initializer_list>
#include <memory>
#include <mutex>

#include "engine/mtp_drafter.h"
#include "engine_options.h"
#include "kernels/timed_backend.h"
#include "util/elapsed.h"
#include "util/random.h"

namespace ds::app {
namespace {

using Clock = std::chrono::steady_clock;


// Time spent in each kind of model call, and how many calls.
struct CallTimes {
  double decode_s = 0, verify_s = 0, pass_s = 0, chain_s = 0, replay_s = 0;
  int64_t decodes = 0, verifies = 0, passes = 0, chains = 0;

  CallTimes minus(const CallTimes& o) const {
    return {decode_s - o.decode_s, verify_s - o.verify_s, pass_s - o.pass_s, chain_s - o.chain_s, replay_s - o.replay_s,
            decodes - o.decodes,   verifies - o.verifies, passes - o.passes, chains - o.chains};
  }
};

// A StepModel that times the calls of the one it wraps: forwards of decodes only (one token each) or
// with a verify (several decode tokens), head passes (step 0) and chained steps, replays.
class TimedStepModel : public StepModel {
 public:
  explicit TimedStepModel(StepModel& inner) : inner_(inner) {}
  CallTimes times() const {
    std::lock_guard lock(mutex_);
    return times_;
  }

  int64_t vocab_size() const override { return inner_.vocab_size(); }
  CacheGeometry cache_geometry() const override { return inner_.cache_geometry(); }
  int64_t max_position_embeddings() const override { return inner_.max_position_embeddings(); }
  Backend& backend() override { return inner_.backend(); }
  void reserve(int64_t max_batch_tokens) override { inner_.reserve(max_batch_tokens); }
  Status forward(const ForwardBatch& batch, HybridCache& cache, float* logits) override {
    bool decodes = true, verifies = false;
    for (const SequenceInput& s : batch.sequences) {
      decodes = decodes && s.kind == StepKind::decode;
      verifies = verifies || (s.kind == StepKind::decode && s.tokens.size() > 1);
    }
    begin_op_step(verifies ? "verify" : decodes ? "engine decode" : "engine prefill");
    const auto start = Clock::now();
    Status status = inner_.forward(batch, cache, logits);
    const double seconds = seconds_since(start);
    std::lock_guard lock(mutex_);
    if (verifies) {
      times_.verify_s += seconds;
      ++times_.verifies;
    } else if (decodes) {
      times_.decode_s += seconds;
      ++times_.decodes;
    }
    return status;
  }
  Status reserve_record(DeltaNetRecord& record, int64_t rows) override { return inner_.reserve_record(record, rows); }
  Status replay_deltanet(const DeltaNetRecord& record, int64_t rows, HybridCache& cache, int32_t slot) override {
    begin_op_step("replay");
    const auto start = Clock::now();
    Status status = inner_.replay_deltanet(record, rows, cache, slot);
    std::lock_guard lock(mutex_);
    times_.replay_s += seconds_since(start);
    return status;
  }
  int64_t num_mtp_layers() const override { return inner_.num_mtp_layers(); }
  Status set_draft_vocab(int64_t n) override { return inner_.set_draft_vocab(n); }
  Status set_draft_tokens(std::span<const int32_t> tokens) override { return inner_.set_draft_tokens(tokens); }
  int64_t draft_vocab_size() const override { return inner_.draft_vocab_size(); }
  double head_step_weight_share() override { return inner_.head_step_weight_share(); }
  uint64_t draft_head_bytes() const override { return inner_.draft_head_bytes(); }
  int64_t hidden_size() const override { return inner_.hidden_size(); }
  std::span<const float> hidden_rows() const override { return inner_.hidden_rows(); }
  Status mtp_forward(const ForwardBatch& batch, int64_t step, const float* pair_hidden, HybridCache& cache, float* logits,
                     float* mtp_hidden) override {
    begin_op_step(step == 0 ? "head pass" : "head step");
    const auto start = Clock::now();
    Status status = inner_.mtp_forward(batch, step, pair_hidden, cache, logits, mtp_hidden);
    const double seconds = seconds_since(start);
    std::lock_guard lock(mutex_);
    if (step == 0) {
      times_.pass_s += seconds;
      ++times_.passes;
    } else {
      times_.chain_s += seconds;
      ++times_.chains;
    }
    return status;
  }

 private:
  // With `bench --op-times` the model runs on a TimedBackend: its ops count under this call's kind.
  void begin_op_step(const char* phase) {
    if (auto* timed = dynamic_cast<TimedBackend*>(&inner_.backend())) timed->begin_step(phase);
  }

  StepModel& inner_;
  mutable std::mutex mutex_;  // the engine thread writes, the bench thread reads between requests
  CallTimes times_;
};

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
