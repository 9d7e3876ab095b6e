// AdaptiveDrafts: the k it picks follows the acceptance seen — the most drafts when every one is right,
// none when none is, then probes of one draft with a backoff that doubles while they fail.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/adaptive_drafts.h"
#include "util/random.h"

namespace ds {
namespace {

TEST(AdaptiveDrafts, FollowsTheAcceptanceSeen) {
  const DraftCosts costs;  // 0.05 per verified row, 0.30 per head step
  AdaptiveDrafts fresh;
  EXPECT_DOUBLE_EQ(fresh.acceptance(), 0.5);
  EXPECT_EQ(fresh.choose(4, costs), 1);  // unknown: try one draft
  EXPECT_EQ(fresh.choose(0, costs), 0);

  AdaptiveDrafts right;
  for (int i = 0; i < 30; ++i) right.observe_round(4, 4);
  EXPECT_GT(right.acceptance(), 0.85);
  EXPECT_EQ(right.choose(4, costs), 4);
  EXPECT_EQ(right.choose(2, costs), 2);
  EXPECT_EQ(right.choose(4, DraftCosts{0.05, 2.0}), 0);  // drafts dearer than what they save

  AdaptiveDrafts wrong;
  wrong.observe_round(1, 0);
  EXPECT_EQ(wrong.choose(4, costs), 0);  // one failed draft is enough to stop
  int plain_steps = 0;
  while (wrong.choose(4, costs) == 0 && plain_steps < 1000) wrong.observe_plain_step(), ++plain_steps;
  EXPECT_EQ(plain_steps, AdaptiveDrafts::kFirstBackoff);  // a probe after the first backoff, not at once
  EXPECT_EQ(wrong.choose(4, costs), 1) << "a probe verifies one draft";
  // Probes that fail come further and further apart: the backoff doubles up to its cap, so a request
  // whose drafts are never right pays one failed round per kMaxBackoff steps.
  std::vector<int> gaps;
  for (int retry = 0; retry < 8; ++retry) {
    wrong.observe_round(1, 0);
    int gap = 0;
    while (wrong.choose(4, costs) == 0 && gap < 1000) wrong.observe_plain_step(), ++gap;
    gaps.push_back(gap);
  }
  EXPECT_EQ(gaps, (std::vector<int>{16, 32, 64, 128, 128, 128, 128, 128}));
  // A probe whose draft is accepted resumes drafting and resets the backoff.
  wrong.observe_round(1, 1);
  EXPECT_EQ(wrong.backoff(), AdaptiveDrafts::kFirstBackoff);
  EXPECT_GT(wrong.choose(4, costs), 0);

  // With cheap drafts (a 32K head) the cost model would retry as soon as the evidence fades below its
  // low break-even; the backoff still spaces the probes.
  for (const DraftCosts cheap : {DraftCosts{0.05, 0.07}, DraftCosts{0.05, 0.032}}) {
    SCOPED_TRACE(testing::Message() << "a draft costs " << cheap.verify_row + cheap.draft_step << " steps");
    AdaptiveDrafts never;
    int drafted_rounds = 0, rounds_before_stopping = -1;
    for (int steps = 0; steps < 512; ++steps) {
      const int64_t k = never.choose(3, cheap);
      if (k > 0) never.observe_round(k, 0), ++drafted_rounds;
      else never.observe_plain_step();
      if (k == 0 && rounds_before_stopping < 0) rounds_before_stopping = drafted_rounds;
    }
    // A few failed rounds until α falls below the break-even (0.12 and 0.082: 2 and 3 rounds; the
    // uniform prior's floor, 1/12, never fell below 0.082), then probes after 8, 16, 32, 64, 128,
    // 128, ... steps: about 9 rounds in all.
    EXPECT_GE(rounds_before_stopping, 1);
    EXPECT_LE(rounds_before_stopping, 4);
    EXPECT_LE(drafted_rounds, 12) << "rounds that failed in 512 steps";
    EXPECT_GE(drafted_rounds, 6);
  }
  // However cheap a draft, α can fall below its break-even: the estimate's floor is the prior's weight
  // over the most evidence the fading keeps.
  AdaptiveDrafts floor;
  for (int i = 0; i < 1000; ++i) floor.observe_round(1, 0);
  const double fading_cap = 1 / (1 - AdaptiveDrafts::kRoundDecay);
  EXPECT_NEAR(floor.acceptance(), AdaptiveDrafts::kPriorWeight / (fading_cap + 2 * AdaptiveDrafts::kPriorWeight), 1e-9);
  EXPECT_LT(floor.acceptance(), 0.03);

  AdaptiveDrafts mixed;  // about 70% of drafts right
  for (int i = 0; i < 40; ++i) mixed.observe_round(3, i % 3 == 0 ? 0 : 3);
  EXPECT_GT(mixed.choose(3, costs), 0);
}

// Probes do not wait for the evidence: at a cost the prior's α = 0.5 does not cover (int8 on AVX2
// measured 0.26 + 0.27 a draft) a fresh request decodes plainly, probes after the backoff, and an
// accepted probe starts drafting. Where even right drafts would not pay, it probes at the longest backoff.
TEST(AdaptiveDrafts, ProbesWhereThePriorAloneWouldNeverDraft) {
  const DraftCosts dear{0.26, 0.27};
  AdaptiveDrafts request;
  EXPECT_EQ(request.choose(3, dear), 0) << "α = 0.5 saves less than a draft costs";
  int plain_steps = 0;
  while (request.choose(3, dear) == 0 && plain_steps < 1000) request.observe_plain_step(), ++plain_steps;
  EXPECT_EQ(plain_steps, AdaptiveDrafts::kFirstBackoff);
  request.observe_round(1, 1);
  EXPECT_EQ(request.choose(3, dear), 2) << "α = 1.25 / 1.5 after the accepted probe: two drafts pay most";

  // A draft costing a step cannot pay even when right: a probe only every kMaxBackoff steps, which
  // gives the cost meter the round it needs to see that the costs have come down.
  AdaptiveDrafts hopeless;
  const DraftCosts dearer_than_a_step{0.05, 1.0};
  std::vector<int> probes_at;
  for (int step = 0; step < 1000; ++step) {
    if (hopeless.choose(3, dearer_than_a_step) > 0) probes_at.push_back(step), hopeless.observe_round(1, 1);
    else hopeless.observe_plain_step();
  }
  // Stopped at step 0, then a probe after 128 plain steps: at step 128, then every 129th step.
  EXPECT_EQ(probes_at, (std::vector<int>{128, 257, 386, 515, 644, 773, 902}));
  EXPECT_GT(hopeless.choose(3, DraftCosts{0.05, 0.07}), 0) << "costs come down: its accepted probes resume drafting";
}

// The rule's worth, by simulation: drafts right with probability P each (independent), the round's
// costs exactly the linear model's. Over 20,000 tokens adaptive k must reach 97% of the tokens per
// cost of the best fixed k for that P (analytic), at costs measured here and elsewhere: a Xeon's bf16,
// Zen 3's bf16, cheap drafts, and int8 on AVX2 (where no k pays and plain decoding is the best).
TEST(AdaptiveDrafts, ReachesTheBestFixedKsRateAtEveryAcceptance) {
  for (const DraftCosts costs : {DraftCosts{0.077, 0.08}, DraftCosts{0.117, 0.06}, DraftCosts{0.03, 0.03}, DraftCosts{0.77, 0.15}}) {
    const double per_draft = costs.verify_row + costs.draft_step;
    for (const double p : {0.0, 0.5, 0.7, 0.9, 1.0}) {
      SCOPED_TRACE(testing::Message() << "a draft costs " << per_draft << ", P = " << p);
      double best_fixed = 1;  // k = 0: a token a step
      for (int k = 1; k <= 3; ++k) {
        double tokens = 1;
        for (int j = 1; j <= k; ++j) tokens += std::pow(p, j);
        best_fixed = std::max(best_fixed, tokens / (1 + k * per_draft));
      }
      AdaptiveDrafts adaptive;
      Xoshiro256 rng(7);
      double tokens = 0, cost = 0;
      while (tokens < 20000) {
        const int64_t k = adaptive.choose(3, costs);
        if (k == 0) {
          tokens += 1, cost += 1, adaptive.observe_plain_step();
          continue;
        }
        int64_t accepted = 0;
        while (accepted < k && rng.uniform() < p) ++accepted;
        tokens += static_cast<double>(1 + accepted), cost += 1 + static_cast<double>(k) * per_draft;
        adaptive.observe_round(k, accepted);
      }
      EXPECT_GE(tokens / cost, 0.97 * best_fixed);
    }
  }
}

}  // namespace
}  // namespace ds
