// AdaptiveDrafts: how many drafts a request's next round should verify, from the acceptance it has
// seen, so that speculative decoding never costs much where drafts are rarely right. Each draft
// verified is a Bernoulli trial (the drafts after the first rejected one are not); the estimate of a
// draft's acceptance α is (successes + 1) / (trials + 2) over evidence that fades — by `kRoundDecay`
// per round and, while decoding plainly, by `kPlainDecay` per step, so a request that dropped to plain
// decoding tries drafts again after a while (one round, and back if they still fail). The number
// chosen maximises expected tokens per cost: a round of k drafts emits 1 + α + … + α^k tokens on
// average and costs 1 + k (verify_row + draft_step) decode steps (../shared/docs/qwen35-mtp.md §4).
#pragma once

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
  static constexpr double kRoundDecay = 0.9;   // ≈ the last 10 rounds count
  static constexpr double kPlainDecay = 0.97;  // a failed round fades to a retry in ≈ 20 plain steps

  // A round verified `drafted` drafts and accepted the first `accepted` of them.
  void observe_round(int64_t drafted, int64_t accepted) {
    successes_ = kRoundDecay * successes_ + static_cast<double>(accepted);
    trials_ = kRoundDecay * trials_ + static_cast<double>(accepted + (accepted < drafted ? 1 : 0));
  }
  void observe_plain_step() {
    successes_ *= kPlainDecay;
    trials_ *= kPlainDecay;
  }
  double acceptance() const { return (successes_ + 1.0) / (trials_ + 2.0); }

  // The k in 0 .. max_k with the most expected tokens per cost (0: decode plainly).
  int64_t choose(int64_t max_k, const DraftCosts& costs) const {
    const double alpha = acceptance();
    int64_t best = 0;
    double best_rate = 1.0, tokens = 1.0, power = 1.0;
    for (int64_t k = 1; k <= max_k; ++k) {
      power *= alpha;
      tokens += power;
      const double rate = tokens / (1.0 + static_cast<double>(k) * (costs.verify_row + costs.draft_step));
      if (rate > best_rate) best = k, best_rate = rate;
    }
    return best;
  }

 private:
  double successes_ = 0, trials_ = 0;
};

}  // namespace ds
