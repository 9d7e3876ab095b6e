// Snapshots: where a prompt is snapshotted (SnapshotPolicy) and the bounded pool that keeps them.
#include <gtest/gtest.h>

#include "cache/prefix_key.h"
#include "cache/snapshot_policy.h"
#include "cache/snapshot_pool.h"

namespace ds {
namespace {

TEST(SnapshotPolicy, MessageStartsPromptEndAndGeometricPositionsOnTheChunkGrid) {
  SnapshotPolicy policy{{9}};
  std::vector<int32_t> prompt(300, 1);
  prompt[0] = 9;    // a message start at 0: nothing to snapshot before it
  prompt[70] = 9;   // → 64
  prompt[100] = 9;  // → 64 again
  prompt[200] = 9;  // → 192
  EXPECT_EQ(policy.positions(prompt), (std::vector<int64_t>{64, 192, 256}));  // 256: the end (299 → 256)
  // A message whose header (<|im_start|>, role, newline) crosses a boundary: both sides of it.
  std::vector<int32_t> crossing(200, 1);
  crossing[126] = 9;  // → 64, and its content at 129 → 128
  EXPECT_EQ(policy.positions(crossing), (std::vector<int64_t>{64, 128, 192}));
  // A message start in the first chunk and a prompt of 64 tokens: nothing before 64 − 1.
  EXPECT_EQ(policy.positions(std::vector<int32_t>(64, 9)), (std::vector<int64_t>{}));
  EXPECT_EQ(policy.positions(std::vector<int32_t>(65, 1)), (std::vector<int64_t>{64}));
  // Geometric: 1K, 2K, 4K, 8K, then every 4K.
  const std::vector<int64_t> long_prompt = SnapshotPolicy{}.positions(std::vector<int32_t>(20000, 1));
  EXPECT_EQ(long_prompt, (std::vector<int64_t>{1024, 2048, 4096, 8192, 12288, 16384, 19968}));
  EXPECT_TRUE(SnapshotPolicy{}.positions(std::vector<int32_t>(1, 1)).empty());
}

TEST(SnapshotPool, FindsByKeyVerifiesTokensAndEvictsTheLeastRecentlyUsed) {
  SnapshotPool pool(2, 3);
  const std::vector<int32_t> a{1, 2}, b{3, 4}, c{5, 6};
  auto key = [](const std::vector<int32_t>& t) { return prefix_keys(t, 0).back(); };
  float* sa = pool.insert(key(a), a, true).state;
  ASSERT_NE(sa, nullptr);
  sa[0] = 1.0f;
  pool.insert(key(b), b, true).state[0] = 2.0f;
  EXPECT_EQ(pool.insert(key(a), a, true).state, nullptr) << "already held: only marked used";
  EXPECT_FALSE(pool.find(key(a), b).has_value()) << "a key whose tokens differ is no hit";
  pool.insert(key(c), c, true).state[0] = 3.0f;  // evicts b, the least recently used
  EXPECT_EQ(pool.evictions(), 1);
  EXPECT_FALSE(pool.find(key(b), b).has_value());
  ASSERT_TRUE(pool.find(key(a), a).has_value());
  EXPECT_EQ(pool.use(*pool.find(key(a), a))[0], 1.0f);
  EXPECT_EQ(pool.use(*pool.find(key(c), c))[0], 3.0f);
  EXPECT_EQ(pool.bytes_used(), 2 * 3 * sizeof(float));
  SnapshotPool off(0, 3);
  EXPECT_EQ(off.insert(key(a), a, true).state, nullptr);
}

// Full, the pool evicts the least recently used snapshot that is no branch point: a prefix that
// diverging snapshots extend outlives them however long ago it was used, and is evictable again
// once they are gone; the earlier snapshots of one chain go in LRU order as any other.
TEST(SnapshotPool, KeepsBranchPointsWhileOthersCanGo) {
  SnapshotPool pool(4, 1);
  auto key = [](const std::vector<int32_t>& t) { return prefix_keys(t, 0).back(); };
  const std::vector<int32_t> shared{1, 2}, chat_a{1, 2, 3}, chat_b{1, 2, 4}, chain_a{1, 2, 3, 7}, other{5}, another{6};
  auto held = [&](const std::vector<int32_t>& t) { return pool.find(key(t), t).has_value(); };
  for (const auto* prefix : {&shared, &chat_a, &chat_b, &chain_a})
    ASSERT_NE(pool.insert(key(*prefix), *prefix, true).state, nullptr);
  ASSERT_NE(pool.insert(key(other), other, true).state, nullptr);  // chat_a (a chain's start), not the older shared
  EXPECT_TRUE(held(shared));
  EXPECT_FALSE(held(chat_a));
  ASSERT_NE(pool.insert(key(another), another, true).state, nullptr);  // chat_b: shared still branches (chain_a)
  EXPECT_TRUE(held(shared));
  EXPECT_FALSE(held(chat_b));
  ASSERT_NE(pool.insert(key(chat_b), chat_b, true).state, nullptr);  // shared branches no more: it is the oldest
  EXPECT_FALSE(held(shared));
  EXPECT_TRUE(held(chain_a) && held(other) && held(another) && held(chat_b));
  EXPECT_EQ(pool.evictions(), 3);
}

TEST(PrefixKeys, EachPrefixHasItsOwnKeyAndTheSaltSeparatesModels) {
  const std::vector<int32_t> t{5, 6, 7};
  const auto keys = prefix_keys(t, 1), other = prefix_keys(t, 2);
  ASSERT_EQ(keys.size(), 4u);
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_NE(keys[i], other[i]);
    for (size_t j = 0; j < i; ++j) EXPECT_NE(keys[i], keys[j]);
  }
  EXPECT_EQ(prefix_keys(std::vector<int32_t>{5, 6}, 1)[2], keys[2]) << "a key depends only on its prefix";
}

}  // namespace
}  // namespace ds
