// AdaptiveDrafts: the k it picks follows the acceptance seen — the most drafts when every one is right,
// none when none is, a retry after a while of plain decoding, and back to none if the retry fails too.
#include <gtest/gtest.h>

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
  EXPECT_GE(plain_steps, 3);  // the evidence fades: a retry, not at once
  EXPECT_LE(plain_steps, 40);
  // Failing again and again spaces the retries further apart (the evidence adds up), to a steady gap.
  int gap = 0;
  for (int retry = 0; retry < 20; ++retry) {
    wrong.observe_round(1, 0);
    gap = 0;
    while (wrong.choose(4, costs) == 0 && gap < 1000) wrong.observe_plain_step(), ++gap;
  }
  EXPECT_GE(gap, 20);  // at most one round of one draft per ~20 steps: a few percent at worst
  EXPECT_LE(gap, 60);

  AdaptiveDrafts mixed;  // about 70% of drafts right
  for (int i = 0; i < 40; ++i) mixed.observe_round(3, i % 3 == 0 ? 0 : 3);
  EXPECT_GT(mixed.choose(3, costs), 0);
}

}  // namespace
}  // namespace ds
