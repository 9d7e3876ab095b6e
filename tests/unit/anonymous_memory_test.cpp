// AnonymousArray: a large array costs no resident memory until written, reads as zeros, and its
// pages go back to the kernel with it; moves hand the mapping over.
#include "util/anonymous_memory.h"

#include <gtest/gtest.h>

#include "util/process_memory.h"

namespace ds {
namespace {

constexpr uint64_t kFloats = uint64_t{64} << 20;  // 256 MiB
constexpr uint64_t kSlackBytes = uint64_t{8} << 20;  // the kernel batches RSS counter updates

TEST(AnonymousArray, ResidentOnlyWhereWrittenZeroWhereReadAndReleasedWithIt) {
  if (resident_memory_bytes() == 0) GTEST_SKIP() << "/proc/self/status is not readable: no resident memory figures";
  const uint64_t before = resident_memory_bytes();
  {
    AnonymousArray<float> array(kFloats);
    ASSERT_NE(array.get(), nullptr);
    EXPECT_LT(resident_memory_bytes(), before + kSlackBytes) << "reserving touched the pages";
    for (uint64_t i = 0; i < kFloats / 2; i += 1024) {
      ASSERT_EQ(array.get()[i], 0.0f) << i;
      array.get()[i] = 1.0f;
    }
    EXPECT_GT(resident_memory_bytes(), before + kFloats * 4 / 2 - kSlackBytes) << "half the pages were written";
  }
  EXPECT_LT(resident_memory_bytes(), before + kSlackBytes) << "the pages outlived the array";
}

TEST(AnonymousArray, EmptyHasNoMappingAndMovesHandItOver) {
  AnonymousArray<float> empty(0);
  EXPECT_EQ(empty.get(), nullptr);
  AnonymousArray<int32_t> a(1000);
  int32_t* data = a.get();
  data[999] = 7;
  AnonymousArray<int32_t> b(std::move(a));
  EXPECT_EQ(b.get(), data);
  EXPECT_EQ(a.get(), nullptr);  // NOLINT(bugprone-use-after-move): a moved-from array is empty
  AnonymousArray<int32_t> c(10);
  c = std::move(b);
  EXPECT_EQ(c.get()[999], 7);
}

}  // namespace
}  // namespace ds
