// BlockPool: reference counts, content keys, keyless blocks handed out before cached ones, and
// cached blocks evicted least recently released first.
#include "cache/block_pool.h"

#include <gtest/gtest.h>

namespace ds {
namespace {

TEST(BlockPool, KeylessBlocksGoFirstThenCachedOnesLeastRecentlyReleased) {
  BlockPool pool(4);
  std::vector<int32_t> taken;
  for (int i = 0; i < 4; ++i) taken.push_back(*pool.allocate());
  EXPECT_FALSE(pool.allocate().has_value());
  EXPECT_EQ(pool.free_blocks(), 0);
  // Blocks 0 and 1 get keys and are released 1 then 0; blocks 2 and 3 are released keyless.
  ASSERT_TRUE(pool.set_key(taken[0], 100));
  ASSERT_TRUE(pool.set_key(taken[1], 101));
  pool.release(taken[1]);
  pool.release(taken[0]);
  pool.release(taken[2]);
  pool.release(taken[3]);
  EXPECT_EQ(pool.free_blocks(), 4);
  EXPECT_EQ(pool.cached_blocks(), 2);
  // Keyless first (most recently released keyless first), then block 1 (released before block 0).
  EXPECT_EQ(*pool.allocate(), taken[3]);
  EXPECT_EQ(*pool.allocate(), taken[2]);
  EXPECT_EQ(pool.evictions(), 0);
  EXPECT_EQ(*pool.allocate(), taken[1]);
  EXPECT_EQ(pool.evictions(), 1);
  EXPECT_FALSE(pool.find(101).has_value()) << "an evicted block loses its key";
  EXPECT_EQ(pool.find(100), taken[0]);
}

TEST(BlockPool, SharedBlocksStayReferencedUntilEveryHolderReleases) {
  BlockPool pool(2);
  const int32_t a = *pool.allocate();
  ASSERT_TRUE(pool.set_key(a, 7));
  pool.acquire(a);  // a second sequence shares it
  EXPECT_EQ(pool.ref_count(a), 2);
  pool.release(a);
  EXPECT_EQ(pool.free_blocks(), 1) << "still held by one sequence";
  pool.release(a);
  EXPECT_EQ(pool.free_blocks(), 2);
  // A cached, unreferenced block is revived by a hit: it leaves the free queue.
  pool.acquire(a);
  EXPECT_EQ(pool.free_blocks(), 1);
  const int32_t b = *pool.allocate();
  EXPECT_NE(a, b);
  EXPECT_FALSE(pool.allocate().has_value());
  EXPECT_EQ(pool.find(7), a) << "a referenced block is never evicted";
}

TEST(BlockPool, ADuplicateKeyStaysPrivate) {
  BlockPool pool(2);
  const int32_t a = *pool.allocate(), b = *pool.allocate();
  EXPECT_TRUE(pool.set_key(a, 5));
  EXPECT_FALSE(pool.set_key(b, 5));
  EXPECT_FALSE(pool.set_key(a, 6)) << "a block keeps its first key";
  pool.release(b);
  EXPECT_EQ(pool.cached_blocks(), 1);
  EXPECT_EQ(*pool.allocate(), b) << "the keyless duplicate is reused first";
}

TEST(BlockPoolDeathTest, ReleasingAnUnreferencedBlockIsABug) {
  BlockPool pool(1);
  EXPECT_DEATH(pool.release(0), "holds no reference");
}

}  // namespace
}  // namespace ds
