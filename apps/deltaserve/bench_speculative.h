// `bench --speculative-tokens K --draft-acceptance P,...`: speculative decoding's machinery at a
// scripted acceptance. Random weights accept almost nothing, so the drafter runs the real MTP head
// (its cost is real), then proposes the main model's known greedy continuation with probability P per
// position and a wrong token otherwise. Plain decoding is measured in the same run,
// around each P: plain, speculative, speculative, plain, each pair's tok/s over both its runs.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/engine.h"
#include "engine/mtp_drafter.h"
#include "engine/step_model.h"
#include "util/status.h"

namespace ds::app {

struct SpeculativeResult {
  double acceptance = 0;  // P asked
  double plain_tokens_per_s = 0, spec_tokens_per_s = 0;  // decode tok/s over the two runs of each
  double accepted_fraction = 0;   // accepted drafts ÷ drafts verified
  double tokens_per_round = 0;    // tokens emitted per verify round
  double drafts_per_round = 0;    // drafts verified per round (adaptive k: the mean k)
  double decode_step_s = 0;       // plain decoding: one forward of one token (mean)
  double verify_s = 0;            // one verify forward of 1 + drafts_per_round rows (mean)
  double head_pass_s = 0;         // one head pass over a round's kept rows (mean)
  double head_step_s = 0;         // one chained head step (mean)
  double draft_per_round_s = 0;   // pass + chained steps per round
  double replay_per_round_s = 0;  // DeltaNet replay per round (rounds with a rejection replay, others not)
  int64_t rounds = 0;
  DraftCosts measured_costs;      // adaptive k's costs as the engine measured them by the end of this P
};

// One request of `prompt_tokens` random tokens generating `decode_tokens` (greedy, EOS ignored) through
// a plain engine over `plain` and a speculative one over `with_head` (made with the MTP head) with
// `options`' k (and the head's `draft_vocab`, with its token map if any), for each P of `acceptances`.
// Errors if speculative output differs from plain decoding's.
Result<std::vector<SpeculativeResult>> run_speculative(StepModel& plain, StepModel& with_head, EngineOptions options,
                                                       const DraftVocab& draft_vocab, const std::vector<double>& acceptances,
                                                       int64_t prompt_tokens,
                                                       int64_t decode_tokens, uint64_t seed);

}  // namespace ds::app
