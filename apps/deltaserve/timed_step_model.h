// TimedStepModel: the bench's engines run over it to time each kind of model call where the engine
// makes it (speculative decoding's verifies, head passes and steps, replays; the concurrency runs'
// batched decodes).
#pragma once

#include <chrono>
#include <mutex>
#include <string>

#include "engine/step_model.h"
#include "kernels/timed_backend.h"
#include "util/elapsed.h"
#include "util/str_cat.h"

namespace ds::app {

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
// with a verify (several decode tokens), head passes (step 0) and chained steps, replays. With
// `bench --op-times` (the model on a TimedBackend) each call's ops also count under its kind: engine
// prefill (any prompt chunk), engine decode (of one sequence, or "N sequences"), verify, head pass,
// head step, replay.
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
    const size_t n = batch.sequences.size();
    begin_op_step(verifies ? "verify"
                  : decodes ? (n > 1 ? str_cat("engine decode, ", n, " sequences") : std::string("engine decode"))
                            : "engine prefill");
    const auto start = std::chrono::steady_clock::now();
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
    const auto start = std::chrono::steady_clock::now();
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
    const auto start = std::chrono::steady_clock::now();
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
  void begin_op_step(const std::string& phase) {
    if (auto* timed = dynamic_cast<TimedBackend*>(&inner_.backend())) timed->begin_step(phase);
  }

  StepModel& inner_;
  mutable std::mutex mutex_;  // the engine thread writes, the bench thread reads between requests
  CallTimes times_;
};

}  // namespace ds::app
