// Resident memory from /proc: the high-water mark keeps a peak that is gone from the resident size,
// and restarting it brings it back to the current size (bench's peak RSS depends on both).
#include "util/process_memory.h"

#include <gtest/gtest.h>

#include <sys/mman.h>

namespace ds::process_memory_test {
namespace {

constexpr size_t kBlockBytes = size_t{128} << 20;
// The kernel batches RSS counter updates per thread, and a few pages move between two reads.
constexpr uint64_t kSlackBytes = uint64_t{4} << 20;

// Touches every page of a kBlockBytes block, then unmaps it. mmap, not new: a sanitizer's allocator
// would keep a freed block resident (quarantine).
void touch_and_free_a_block() {
  void* mapped = mmap(nullptr, kBlockBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  char* block = static_cast<char*>(mapped);
  for (size_t i = 0; i < kBlockBytes; i += 4096) block[i] = static_cast<char>(i >> 12);
  ASSERT_EQ(munmap(mapped, kBlockBytes), 0);
}

TEST(ProcessMemory, PeakKeepsAFreedBlockAndRestartsAtTheCurrentSize) {
  if (resident_memory_bytes() == 0) GTEST_SKIP() << "/proc/self/status is not readable: no resident memory figures";
  if (!reset_peak_resident_memory()) GTEST_SKIP() << "this kernel does not allow restarting VmHWM (/proc/self/clear_refs)";
  const uint64_t before = resident_memory_bytes();
  ASSERT_NO_FATAL_FAILURE(touch_and_free_a_block());
  const uint64_t after = resident_memory_bytes();
  const uint64_t peak = peak_resident_memory_bytes();
  EXPECT_GE(peak + kSlackBytes, before + kBlockBytes) << "the high-water mark missed the block";
  EXPECT_LT(after, before + kBlockBytes / 2) << "the freed block stayed resident, so the test shows nothing";

  ASSERT_TRUE(reset_peak_resident_memory());
  const uint64_t restarted = peak_resident_memory_bytes();
  EXPECT_LT(restarted, peak - kBlockBytes / 2) << "the restarted mark still holds the freed block";
  EXPECT_GE(restarted + kSlackBytes, resident_memory_bytes());
}

}  // namespace
}  // namespace ds::process_memory_test
