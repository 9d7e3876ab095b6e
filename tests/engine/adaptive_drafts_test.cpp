// AdaptiveDrafts: the k it picks follows the acceptance seen — the most drafts when every one is right,
// none when none is, then probes of one draft with a backoff that doubles while they fail.
#include <gtest/gtest.h>

#include <vector>

#include "engine/adaptive_drafts.h"

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
// accepted probe starts drafting. Where even right drafts would not pay, it never probes.
TEST(AdaptiveDrafts, ProbesWhereThePriorAloneWouldNeverDraft) {
  const DraftCosts dear{0.26, 0.27};
  AdaptiveDrafts request;
  EXPECT_EQ(request.choose(3, dear), 0) << "α = 0.5 saves less than a draft costs";
  int plain_steps = 0;
  while (request.choose(3, dear) == 0 && plain_steps < 1000) request.observe_plain_step(), ++plain_steps;
  EXPECT_EQ(plain_steps, AdaptiveDrafts::kFirstBackoff);
  request.observe_round(1, 1);
  EXPECT_EQ(request.choose(3, dear), 2) << "α = 1.25 / 1.5 after the accepted probe: two drafts pay most";

  AdaptiveDrafts hopeless;
  const DraftCosts dearer_than_a_step{0.05, 1.0};
  int drafted_rounds = 0;
  for (int step = 0; step < 1000; ++step) {
    if (hopeless.choose(3, dearer_than_a_step) > 0) ++drafted_rounds, hopeless.observe_round(1, 1);
    else hopeless.observe_plain_step();
  }
  EXPECT_EQ(drafted_rounds, 0) << "a draft costing a step cannot pay even when right";
}

}  // namespace
}  // namespace ds
