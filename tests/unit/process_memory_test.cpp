// Resident memory from /proc: the high-water mark keeps a peak that is gone from the resident size,
// and restarting it brings it back to the current size (bench's peak RSS depends on both); the
// share of a range in 2 MiB pages (the loader's log of its weight arena).
#include "util/process_memory.h"

#include <gtest/gtest.h>

#include <sys/mman.h>

#include <cstdint>
#include <cstdio>

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

// A mapping of 4 KiB pages has no huge pages; one advised to take them and touched has, where the
// kernel grants them, whole 2 MiB pages within its size; a range that overlaps no mapping has none.
TEST(ProcessMemory, HugePageBytesOfARangeAreItsMappingsAnonHugePages) {
  constexpr size_t kBytes = size_t{16} << 20, kHuge = size_t{2} << 20;
  void* mapped = mmap(nullptr, kBytes + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  char* aligned = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(mapped) + kHuge - 1) / kHuge * kHuge);
  char* small = aligned, *large = aligned + kBytes / 2;  // two halves: each its own mapping once advised
  ASSERT_EQ(madvise(small, kBytes / 2, MADV_NOHUGEPAGE), 0);
  const bool advised = madvise(large, kBytes / 2, MADV_HUGEPAGE) == 0;
  for (size_t i = 0; i < kBytes; i += 4096) aligned[i] = 1;
  EXPECT_EQ(huge_page_bytes(small, kBytes / 2), 0u) << "a MADV_NOHUGEPAGE range reported huge pages";
  const uint64_t huge = huge_page_bytes(large, kBytes / 2);
  EXPECT_EQ(huge % kHuge, 0u);
  EXPECT_LE(huge, kBytes / 2);
  if (advised && huge == 0)
    std::printf("NOTE: the kernel granted no 2 MiB page to an advised range (THP off or memory fragmented): "
                "only the 4 KiB and the empty cases were checked\n");
  ASSERT_EQ(munmap(mapped, kBytes + kHuge), 0);
  EXPECT_EQ(huge_page_bytes(mapped, kBytes + kHuge), 0u) << "an unmapped range reported huge pages";
}

}  // namespace
}  // namespace ds::process_memory_test
