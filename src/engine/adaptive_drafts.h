// AdaptiveDrafts: how many drafts a request's next round should verify, from the acceptance it has
// seen, so that speculative decoding never costs much where drafts are rarely right. Each draft
// verified is a Bernoulli trial (the drafts after the first rejected one are not); the estimate of a
// draft's acceptance α is (successes + a) / (trials + 2a), a = `kPriorWeight`, over evidence that
// fades — by `kRoundDecay` per round and, while decoding plainly, by `kPlainDecay` per step. The fading
// caps the evidence at 1 / (1 − kRoundDecay) = 10 trials, so α cannot fall below a / (10 + 2a); that
// floor must sit below the break-even of the cheapest drafts (the prior's 0.05 a verified row plus an
// int8 32K head's 0.032 a draft: α ≈ 0.08), or a request whose drafts are never right drafts for
// ever: a = 1/4 puts it at 0.024 (the uniform prior, a = 1, at 1/12). The number chosen maximises
// expected tokens per cost: a round of k drafts emits 1 + α + … + α^k tokens on average and costs
// 1 + k (verify_row + draft_step) decode steps (../shared/docs/qwen35-mtp.md §4).
// Once that says 0 the request decodes plainly and retries with exponential backoff: one probe round
// of one draft after kFirstBackoff plain steps, then after twice as many each time a probe fails, up
// to kMaxBackoff; a probe with an accepted draft resumes drafting. Probes do not wait for the evidence:
// where a draft costs more than the prior's α = 0.5 saves (int8 on AVX2 measured 0.53 a draft), the
// model alone would never try, and drafts right 70% of the time would go unused. The fading evidence
// alone, on the other hand, would retry as soon as α crosses the break-even,
// which with a cheap head (a 32K draft vocabulary: break-even α ≈ 0.12) came every ~10 steps and cost
// 9% where no draft is ever right; with the backoff a request that never accepts pays a failed round
// per 128 steps once the backoff has grown.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace ds {

// Costs in decode steps: one more verified row, and one head step (a draft); `bench --speculative-tokens
// K --draft-acceptance P` measures both.
struct DraftCosts {
  double verify_row = 0.05;
  double draft_step = 0.30;
};

class AdaptiveDrafts {
 public:
  static constexpr double kPriorWeight = 0.25;  // pseudo-trials each way: α starts at 0.5, one failure takes it to 1/6
  static constexpr double kRoundDecay = 0.9;   // ≈ the last 10 rounds count
  static constexpr double kPlainDecay = 0.97;  // the evidence of a failed round fades over ≈ 20 plain steps
  static constexpr int64_t kFirstBackoff = 8, kMaxBackoff = 128;  // plain steps before a probe

  // A round verified `drafted` drafts and accepted the first `accepted` of them.
  void observe_round(int64_t drafted, int64_t accepted) {
    successes_ = kRoundDecay * successes_ + static_cast<double>(accepted);
    trials_ = kRoundDecay * trials_ + static_cast<double>(accepted + (accepted < drafted ? 1 : 0));
    if (!probing_) return;
    probing_ = false;
    waited_ = 0;
    if (accepted > 0) stopped_ = false, backoff_ = kFirstBackoff;
    else backoff_ = std::min(2 * backoff_, kMaxBackoff);
  }
  void observe_plain_step() {
    successes_ *= kPlainDecay;
    trials_ *= kPlainDecay;
    ++waited_;
  }
  double acceptance() const { return (successes_ + kPriorWeight) / (trials_ + 2 * kPriorWeight); }
  int64_t backoff() const { return backoff_; }  // plain steps between probes while stopped

  // The drafts of the next round: while drafting, the k in 0 .. max_k with the most expected tokens
  // per cost; once that has said 0, none until the backoff has passed, then one (a probe). Where drafts
  // would not pay at these costs even if every one were right, still a probe after kMaxBackoff: the
  // costs are measured from rounds (draft_cost_meter.h), and without any a cost measured under a
  // passing load, or a stall, would stop drafting for good.
  int64_t choose(int64_t max_k, const DraftCosts& costs) {
    if (!stopped_) {
      if (const int64_t k = best(max_k, costs, acceptance()); k > 0) return k;
      stopped_ = true, waited_ = 0;
      return 0;
    }
    if (waited_ < (best(max_k, costs, 1.0) == 0 ? kMaxBackoff : backoff_)) return 0;
    probing_ = true;
    return 1;
  }

 private:
  // The k in 0 .. max_k with the most expected tokens per cost at acceptance alpha (0: decode plainly).
  static int64_t best(int64_t max_k, const DraftCosts& costs, double alpha) {
    int64_t chosen = 0;
    double best_rate = 1.0, tokens = 1.0, power = 1.0;
    for (int64_t k = 1; k <= max_k; ++k) {
      power *= alpha;
      tokens += power;
      const double rate = tokens / (1.0 + static_cast<double>(k) * (costs.verify_row + costs.draft_step));
      if (rate > best_rate) chosen = k, best_rate = rate;
    }
    return chosen;
  }

  double successes_ = 0, trials_ = 0;
  bool stopped_ = false;   // the cost model said 0: probes only, each after the backoff
  bool probing_ = false;   // the round chosen last is a probe
  int64_t waited_ = 0;     // plain steps since stopping or since the last probe
  int64_t backoff_ = kFirstBackoff;
};

}  // namespace ds
