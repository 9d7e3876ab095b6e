// DraftCostMeter: adaptive k's costs follow the steps' timings — a verified row's share of a plain
// step, a draft's — the prior until their first sample, then the mean and moving average of the samples,
// once a plain step's time is known (or inferred from verifies).
#include <gtest/gtest.h>

#include "engine/draft_cost_meter.h"

namespace ds {
namespace {

constexpr DraftCosts kPrior{0.05, 0.30};

TEST(DraftCostMeter, StartsAtThePriorAndTakesNoDraftSampleBeforeAStepTimeIsKnown) {
  DraftCostMeter meter(kPrior);
  EXPECT_EQ(meter.costs().verify_row, 0.05);
  EXPECT_EQ(meter.costs().draft_step, 0.30);
  meter.drafting(0.5, 3);  // no step time yet: nothing to divide by
  EXPECT_EQ(meter.costs().draft_step, 0.30);
  meter.plain_step(0);  // not a time
  meter.plain_step(-1);
  meter.verify_step(0.1, 0);  // no extra rows: not a verify
  EXPECT_EQ(meter.plain_step_seconds(), 0);
  for (int i = 0; i < DraftCostMeter::kMinPlainSteps - 1; ++i) meter.plain_step(0.1);
  EXPECT_EQ(meter.plain_step_seconds(), 0) << "fewer plain steps than the minimum, no verify: no T1 yet";
}

TEST(DraftCostMeter, ConvergesToTheMeasuredCosts) {
  DraftCostMeter meter(kPrior);
  for (int i = 0; i < 200; ++i) {
    meter.plain_step(0.100);          // T1 = 100 ms
    meter.verify_step(0.130, 3);      // 4 rows: 1 + 3 × 0.10
    meter.drafting(0.021, 3);         // 3 drafts of 0.07 steps
  }
  EXPECT_NEAR(meter.plain_step_seconds(), 0.100, 1e-12);
  EXPECT_NEAR(meter.costs().verify_row, 0.10, 1e-6);
  EXPECT_NEAR(meter.costs().draft_step, 0.07, 1e-6);
  // It follows a change (load arrives: verifies cost more) within tens of samples, not at once.
  meter.verify_step(0.190, 3);
  EXPECT_GT(meter.costs().verify_row, 0.10);
  EXPECT_LT(meter.costs().verify_row, 0.20);
  for (int i = 0; i < 100; ++i) meter.verify_step(0.190, 3);
  EXPECT_NEAR(meter.costs().verify_row, 0.30, 1e-4);
}

TEST(DraftCostMeter, UntilEnoughPlainStepsTheStepTimeComesFromTheVerifies) {
  DraftCostMeter meter(kPrior);
  meter.verify_step(0.115, 3);  // at the prior's 0.05 per row: T1 = 100 ms
  EXPECT_NEAR(meter.plain_step_seconds(), 0.100, 1e-12);
  EXPECT_EQ(meter.costs().verify_row, 0.05) << "one equation, two unknowns: verify_row keeps the prior";
  for (int i = 0; i < 200; ++i) meter.drafting(0.021, 3);
  EXPECT_NEAR(meter.costs().draft_step, 0.07, 1e-6);
  // One fast plain step (the bandwidth swings) is no yardstick: the inference stands until four.
  meter.plain_step(0.060);
  meter.verify_step(0.115, 3);
  EXPECT_NEAR(meter.plain_step_seconds(), 0.100, 1e-12);
  EXPECT_EQ(meter.costs().verify_row, 0.05);
  for (double s : {0.080, 0.100, 0.120}) meter.plain_step(s);
  EXPECT_NEAR(meter.plain_step_seconds(), 0.090, 1e-12) << "the mean of the four";
  meter.verify_step(0.117, 3);  // (0.117 / 0.090 − 1) / 3 = 0.1
  EXPECT_NEAR(meter.costs().verify_row, 0.1, 1e-12) << "the first sample replaces the prior";
  meter.verify_step(0.144, 3);  // 0.2
  EXPECT_NEAR(meter.costs().verify_row, 0.15, 1e-12) << "the mean of the two";
}

TEST(DraftCostMeter, AStallCountsAsABoundedSample) {
  DraftCostMeter meter(kPrior);
  for (int i = 0; i < DraftCostMeter::kMinPlainSteps; ++i) meter.plain_step(0.100);
  for (int i = 0; i < 20; ++i) meter.verify_step(0.110, 1);  // 0.1 a row
  meter.verify_step(60.0, 1);  // a minute: a page-in or a descheduled thread, not a row's cost
  EXPECT_NEAR(meter.costs().verify_row, 0.1 + DraftCostMeter::kNewWeight * (DraftCostMeter::kMaxCost - 0.1), 1e-12);
  meter.verify_step(0.050, 1);  // faster than a plain step: a row costs nothing, never less
  EXPECT_GE(meter.costs().verify_row, 0);
}

// The meter asks for the plain steps its T1 needs: the first kMinPlainSteps, then one after every
// kRecalibrateAfter verifies (a request whose every round verifies would otherwise never give one,
// and verify_row would stay at a prior however wrong).
TEST(DraftCostMeter, WantsPlainStepsUntilItHasEnoughThenOnceEveryRecalibration) {
  DraftCostMeter meter(kPrior);
  EXPECT_TRUE(meter.wants_plain_step());
  for (int i = 0; i < 100; ++i) meter.verify_step(0.2, 3);
  EXPECT_TRUE(meter.wants_plain_step()) << "verifies alone never satisfy it";
  for (int i = 0; i < DraftCostMeter::kMinPlainSteps; ++i) {
    EXPECT_TRUE(meter.wants_plain_step());
    meter.plain_step(0.100);
  }
  EXPECT_FALSE(meter.wants_plain_step());
  for (int i = 0; i < DraftCostMeter::kRecalibrateAfter - 1; ++i) meter.verify_step(0.130, 3);
  EXPECT_FALSE(meter.wants_plain_step());
  meter.verify_step(0.130, 3);
  EXPECT_TRUE(meter.wants_plain_step()) << "after kRecalibrateAfter verifies, T1 wants a fresh sample";
  meter.plain_step(0.100);
  EXPECT_FALSE(meter.wants_plain_step());
  // With its plain steps, a verify_row prior far below the truth is corrected (int8 on AVX2: 4 rows
  // cost 2.5 plain steps, 0.5 a row, where the prior says 0.05).
  for (int i = 0; i < 60; ++i) meter.verify_step(0.250, 3);
  EXPECT_NEAR(meter.costs().verify_row, 0.5, 0.01);
}

}  // namespace
}  // namespace ds
