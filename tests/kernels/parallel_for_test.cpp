// Backend::parallel_for: the engine draws a batch's tokens with it, one task per request. Every task
// must run exactly once, whatever the count and the pool's size, and all before it returns.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "kernels/cpu/cpu_backend.h"

namespace ds {
namespace {

TEST(CpuParallelFor, EveryTaskRunsOnceBeforeItReturns) {
  for (int threads : {1, 2, 3}) {
    CpuBackend backend(detect_isa(), threads);
    for (const int64_t count : {0, 1, 2, 3, 17, 200}) {
      SCOPED_TRACE(testing::Message() << count << " tasks, " << threads << " threads");
      std::vector<std::atomic<int>> runs(static_cast<size_t>(count));
      std::atomic<int> out_of_range{0};
      backend.parallel_for(count, [&](int64_t i) {
        if (i < 0 || i >= count) return void(out_of_range.fetch_add(1));
        runs[static_cast<size_t>(i)].fetch_add(1);
      });
      EXPECT_EQ(out_of_range.load(), 0);
      for (int64_t i = 0; i < count; ++i) EXPECT_EQ(runs[static_cast<size_t>(i)].load(), 1) << "task " << i;
    }
  }
}

// The base class's default (the reference backend's): in turn, in order.
TEST(RefParallelFor, RunsEveryTaskInTurn) {
  RefBackend ref;
  std::vector<int64_t> order;
  ref.parallel_for(5, [&](int64_t i) { order.push_back(i); });
  EXPECT_EQ(order, (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

}  // namespace
}  // namespace ds
