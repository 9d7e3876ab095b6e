// Scheduler unit tests over a simulated model: token budget and sequence cap respected, decodes
// never wait behind prefills, prefill chunks end on 64-token boundaries, FCFS admission (nothing
// starves), whole-prompt admission, preemption that frees and later recomputes, and a cache that
// never hands one block to two sequences.
#include "engine/scheduler.h"
#include "kernels/ref/ref_backend.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>

#include "fake_step_model.h"

namespace ds {
namespace {

class Simulation {
 public:
  Simulation(SchedulerLimits limits, int64_t num_blocks, int64_t num_slots)
      : limits(limits), scheduler(limits), cache(test::FakeStepModel().cache_geometry(), CacheCapacity{num_blocks, num_slots}, backend) {}

  Request* submit(int64_t prompt_len, int64_t max_tokens) {
    SamplingParams params;
    params.max_tokens = max_tokens;
    const uint64_t id = next_id++;
    auto r = std::make_unique<Request>(id, std::vector<int32_t>(static_cast<size_t>(prompt_len), 1), params, 0,
                                       std::make_shared<RequestStream>(id, prompt_len));
    scheduler.add(r.get());
    requests.push_back(std::move(r));
    return requests.back().get();
  }

  // One step: schedule, check the plan, apply it, run the chunks (one new token when a request
  // reaches its end), finish requests at max_tokens.
  StepPlan step() {
    std::vector<Request*> decoding_before;
    for (Request* r : scheduler.running())
      if (!r->prefilling()) decoding_before.push_back(r);
    StepPlan plan = scheduler.schedule(cache);
    cache.apply(plan.cache);
    EXPECT_LE(plan.tokens, limits.max_batch_tokens);
    EXPECT_LE(static_cast<int64_t>(scheduler.running().size()), limits.max_seqs);
    // Every request that was decoding got its token unless it was preempted.
    for (Request* r : decoding_before) {
      const bool preempted = std::find(plan.preempted.begin(), plan.preempted.end(), r) != plan.preempted.end();
      const bool ran = std::any_of(plan.chunks.begin(), plan.chunks.end(), [&](const ScheduledChunk& c) { return c.request == r; });
      EXPECT_TRUE(preempted || ran) << "decoding request " << r->id << " skipped";
    }
    std::set<int32_t> blocks;
    int64_t held = 0;
    for (const auto& r : requests)
      for (int32_t b : r->cache.blocks) {
        EXPECT_TRUE(blocks.insert(b).second) << "block " << b << " held twice";
        ++held;
      }
    EXPECT_EQ(held + cache.free_blocks(), cache.num_blocks());
    for (const ScheduledChunk& c : plan.chunks) {
      Request& r = *c.request;
      if (r.num_computed == 0 && r.preemptions == 0) admitted.push_back(r.id);
      EXPECT_GE(static_cast<int64_t>(r.cache.blocks.size()) * 16, r.num_computed + c.num_tokens);
      EXPECT_GE(r.cache.slot, 0);
      if (c.kind == StepKind::decode) {
        EXPECT_EQ(c.num_tokens, 1);
      } else {
        EXPECT_EQ(r.num_computed % kPrefillAlign, 0) << "prefill chunk starts off a 64-token boundary";
        const int64_t end = r.num_computed + c.num_tokens;
        EXPECT_TRUE(end == r.prefill_end || end % kPrefillAlign == 0) << "chunk ends at " << end;
      }
      r.num_computed += c.num_tokens;
      if (r.num_computed == r.total()) r.tokens.push_back(2);
    }
    for (const ScheduledChunk& c : plan.chunks) {
      Request* r = c.request;
      if (r->generated() >= r->params.max_tokens) {
        cache.release(r->cache);
        scheduler.remove(r);
        finished.push_back(r->id);
      }
    }
    return plan;
  }

  void run_to_end(int max_steps = 10000) {
    for (int i = 0; i < max_steps && !scheduler.idle(); ++i) step();
    ASSERT_TRUE(scheduler.idle()) << "requests left after " << max_steps << " steps";
    EXPECT_EQ(cache.free_blocks(), cache.num_blocks());
    EXPECT_EQ(cache.free_slots(), cache.num_slots());
  }

  SchedulerLimits limits;
  Scheduler scheduler;
  RefBackend backend;
  HybridCache cache;
  std::vector<std::unique_ptr<Request>> requests;
  std::vector<uint64_t> finished, admitted;
  uint64_t next_id = 0;
};

TEST(Scheduler, LimitsMustLeaveRoomForPrefill) {
  EXPECT_TRUE(validate_limits({128, 16}).ok());
  EXPECT_FALSE(validate_limits({64, 16}).ok());
  EXPECT_FALSE(validate_limits({256, 0}).ok());
}

TEST(Scheduler, LongPromptIsChunkedOnBoundariesWhileDecodesFlow) {
  Simulation sim({128, 4}, 1000, 4);
  Request* short_request = sim.submit(10, 50);
  sim.step();  // the short prompt is prefilled whole and starts decoding
  EXPECT_EQ(short_request->generated(), 1);
  Request* long_request = sim.submit(1000, 3);
  std::vector<int64_t> long_chunks;
  while (long_request->prefilling() || long_request->num_computed == 0) {
    const StepPlan plan = sim.step();
    for (const ScheduledChunk& c : plan.chunks)
      if (c.request == long_request) long_chunks.push_back(c.num_tokens);
  }
  // Budget 128 minus the running decode leaves 127: chunks of 64 until the last 104 fit at once.
  ASSERT_EQ(long_chunks.size(), 15u);
  for (size_t i = 0; i + 1 < long_chunks.size(); ++i) EXPECT_EQ(long_chunks[i], 64);
  EXPECT_EQ(long_chunks.back(), 1000 - 14 * 64);
  EXPECT_EQ(short_request->generated(), 1 + static_cast<int64_t>(long_chunks.size()));  // one token per step, throughout
  sim.run_to_end();
}

TEST(Scheduler, AdmissionIsFirstComeFirstServed) {
  // A big request at the head is never overtaken by the small ones behind it.
  Simulation sim({256, 2}, 40, 2);  // 640 positions
  sim.submit(300, 20);
  sim.submit(500, 5);  // cannot be admitted while the first holds its blocks
  for (int i = 0; i < 6; ++i) sim.submit(10, 3);
  sim.run_to_end();
  ASSERT_EQ(sim.finished.size(), 8u);
  EXPECT_EQ(sim.admitted, (std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(Scheduler, RunningSequencesAreCapped) {
  Simulation sim({512, 3}, 1000, 8);
  for (int i = 0; i < 10; ++i) sim.submit(20, 10);
  sim.run_to_end();  // step() checks running ≤ max_seqs at every step
  EXPECT_EQ(sim.finished.size(), 10u);
}

TEST(Scheduler, PreemptsTheNewestAndRecomputesIt) {
  // 12 blocks = 192 positions; two sequences of 60 + 100 tokens cannot both finish.
  Simulation sim({256, 4}, 12, 4);
  Request* older = sim.submit(60, 100);
  Request* newer = sim.submit(60, 100);
  bool preempted = false;
  for (int i = 0; i < 400 && !sim.scheduler.idle(); ++i) {
    const StepPlan plan = sim.step();
    for (Request* r : plan.preempted) {
      EXPECT_EQ(r, newer) << "the newest request is preempted first";
      EXPECT_EQ(r->num_computed, 0);
      EXPECT_TRUE(r->cache.empty());
      preempted = true;
    }
  }
  EXPECT_TRUE(preempted);
  EXPECT_EQ(older->generated(), 100);
  sim.run_to_end();
  EXPECT_EQ(sim.finished, (std::vector<uint64_t>{0, 1}));
}

TEST(Scheduler, SequencesThatCannotAllFitTakeTurns) {
  // Decoding sequences in a pool that cannot hold them all: the newest yield, then resume.
  Simulation sim({128, 3}, 7, 3);  // 112 positions
  sim.submit(16, 60);
  sim.submit(30, 50);
  sim.submit(20, 70);
  sim.run_to_end();
  EXPECT_EQ(sim.finished.size(), 3u);
}

}  // namespace
}  // namespace ds
