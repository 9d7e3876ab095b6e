// DraftCostMeter: what adaptive k's costs are on this machine, for this model, under this load —
// measured from the engine's own steps instead of assumed. A verified row's cost depends on how much
// compute the matmul kernels hide behind reading the weights (ISA, format, the other jobs on the
// cores); a head step's on the head's share of the bytes (the model's size, the draft vocabulary).
// Both are in units of one plain decode step, as adaptive_drafts.h's cost model wants them:
//   plain step   T1 = a forward whose sequences each decode one token;
//   verify_row   = (T_verify ÷ T1 − 1) ÷ (rows past one per sequence);
//   draft_step   = (the head's calls of a round: its pass and its chained steps) ÷ T1 ÷ the drafts.
// Each cost, and T1, is the mean of its samples, then their moving average past kNewWeight's horizon;
// a cost is its prior until its first sample (a prior far from the truth, pulled by a tenth per
// sample, needs ~8 rounds of ~3 steps each to say stop for int8 on AVX2). Until
// kMinPlainSteps have been seen — a request that verifies every round has a plain step only at its end —
// T1 is inferred from the verifies with the current verify_row, and verify_row keeps its value: one
// plain step is too noisy a yardstick (single steps swing ±20% with the memory bandwidth).
// Inferred, verify_row stays at its prior however wrong: where the prior made drafts look cheap, a
// request drafted every round and never gave the meter the plain steps that would correct it (int8 on
// AVX2: 0.05 assumed, 0.26–0.8 real). So the meter asks for plain steps (`wants_plain_step`): the
// engine makes its next step plain while fewer than kMinPlainSteps were seen, then once every
// kRecalibrateAfter verifies, so that T1 follows the machine's load (at P = 1, K = 3 a plain step per
// 64 rounds costs ~0.7% of the speed-up, by arithmetic).
#pragma once

#include <algorithm>
#include <cstdint>

#include "engine/adaptive_drafts.h"

namespace ds {

class DraftCostMeter {
 public:
  static constexpr double kNewWeight = 0.1;  // ≈ the last 10 samples count
  static constexpr double kMaxCost = 4.0;    // a sample past this is a stall (a page fault, the OS), not a cost
  static constexpr int64_t kMinPlainSteps = 4;
  static constexpr int64_t kRecalibrateAfter = 64;  // verifies without a plain step

  explicit DraftCostMeter(DraftCosts prior) : costs_(prior) {}

  DraftCosts costs() const { return costs_; }

  // A forward whose every sequence decoded one token.
  void plain_step(double seconds) {
    if (!(seconds > 0)) return;
    ++plain_steps_;
    verifies_since_plain_ = 0;
    plain_mean_s_ = sample_into(plain_mean_s_, seconds, plain_steps_);
  }
  // A forward whose sequences decoded `extra_rows` tokens past one each (every sequence a decode).
  void verify_step(double seconds, int64_t extra_rows) {
    if (!(seconds > 0) || extra_rows < 1) return;
    const auto extra = static_cast<double>(extra_rows);
    ++verifies_since_plain_;
    if (plain_steps_ < kMinPlainSteps) {  // T1 as the current verify_row says
      const double inferred = seconds / (1 + extra * costs_.verify_row);
      inferred_s_ = inferred_s_ > 0 ? average(inferred_s_, inferred) : inferred;
      return;
    }
    costs_.verify_row = sample_into(costs_.verify_row, clamp((seconds / plain_mean_s_ - 1) / extra), ++verify_samples_);
  }
  // The head's calls that drafted a round of `drafts` tokens per sequence (the deepest sequence's).
  void drafting(double seconds, int64_t drafts) {
    const double step = plain_step_seconds();
    if (!(seconds > 0) || drafts < 1 || !(step > 0)) return;
    costs_.draft_step = sample_into(costs_.draft_step, clamp(seconds / step / static_cast<double>(drafts)), ++draft_samples_);
  }
  // Whether a plain step would give T1 a sample it needs (see the top).
  bool wants_plain_step() const { return plain_steps_ < kMinPlainSteps || verifies_since_plain_ >= kRecalibrateAfter; }
  // T1: measured once kMinPlainSteps plain steps were seen, inferred from the verifies before (0: neither yet).
  double plain_step_seconds() const { return plain_steps_ >= kMinPlainSteps ? plain_mean_s_ : inferred_s_; }

 private:
  static double average(double old_value, double sample) { return old_value + kNewWeight * (sample - old_value); }
  // The n-th sample into a value: the mean of the samples, then a moving average.
  static double sample_into(double value, double sample, int64_t n) {
    return value + std::max(kNewWeight, 1.0 / static_cast<double>(n)) * (sample - value);
  }
  static double clamp(double cost) { return std::clamp(cost, 0.0, kMaxCost); }

  DraftCosts costs_;
  int64_t plain_steps_ = 0;
  int64_t verifies_since_plain_ = 0;
  int64_t verify_samples_ = 0, draft_samples_ = 0;
  double plain_mean_s_ = 0;  // of the plain steps seen
  double inferred_s_ = 0;    // T1 from the verifies, before enough plain steps
};

}  // namespace ds
