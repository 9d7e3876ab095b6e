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
  const DraftCosts cheap{0.05, 0.07};
  AdaptiveDrafts never;
  int drafted_rounds = 0, steps = 0;
  for (; steps < 512; ++steps) {
    const int64_t k = never.choose(3, cheap);
    if (k > 0) never.observe_round(k, 0), ++drafted_rounds;
    else never.observe_plain_step();
  }
  // ~10 failed rounds before the evidence says stop (break-even α ≈ 0.11 under the uniform prior), then
  // probes after 8, 16, 32, 64, 128, 128, ... steps: 16 rounds in all.
  EXPECT_LE(drafted_rounds, 20) << "rounds that failed in 512 steps";
  EXPECT_GE(drafted_rounds, 10);

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
  EXPECT_EQ(request.choose(3, dear), 1) << "α = 2/3 after the accepted probe: one draft pays";

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
