// Backend::copy: the cache's snapshot and KV-block copies; every byte must land, whatever the size
// and alignment, and nothing outside the destination range may change.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "kernels/cpu/cpu_backend.h"
#include "util/random.h"

namespace ds {
namespace {

// Copies of 1 MiB and more are split over the pool's threads in page-aligned parts: 1–3 threads.
TEST(CpuCopy, EveryByteLandsForAnySizeAndOffset) {
  for (int threads : {1, 2, 3}) {
    CpuBackend backend(detect_isa(), threads);
    RefBackend ref;
    uint64_t seed = 3;
    std::vector<std::byte> src((3 << 20) + 4099);
    for (std::byte& b : src) b = static_cast<std::byte>(splitmix64(seed));
    // Empty, small, page multiples and not, aligned and not.
    for (const uint64_t bytes : {uint64_t{0}, uint64_t{1}, uint64_t{4095}, uint64_t{1} << 20, (uint64_t{1} << 20) + 1,
                                 (uint64_t{3} << 20) + 7}) {
      for (const size_t offset : {size_t{0}, size_t{3}}) {
        SCOPED_TRACE(testing::Message() << bytes << " bytes at offset " << offset << ", " << threads << " threads");
        std::vector<std::byte> fast(src.size(), std::byte{0xAB}), oracle(src.size(), std::byte{0xAB});
        backend.copy(fast.data() + offset, src.data() + offset, bytes);
        ref.copy(oracle.data() + offset, src.data() + offset, bytes);
        EXPECT_EQ(fast, oracle);
      }
    }
  }
}

}  // namespace
}  // namespace ds
