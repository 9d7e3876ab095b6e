// TokenCounts: the token map's ordering (most frequent first, ties and unseen ids in id order, only the
// ids asked for) and the coverage of a draft vocabulary, by the map and by id (merge rank).
#include "tokenizer/token_counts.h"

#include <gtest/gtest.h>

#include <vector>

namespace ds {
namespace {

TEST(TokenCounts, OrderingIsMostFrequentFirstThenIdOrder) {
  TokenCounts counts(8);
  counts.add(std::vector<int32_t>{5, 3, 5, 7, 3, 5, 1});
  EXPECT_EQ(counts.total(), 7u);
  EXPECT_EQ(counts.distinct(), 4);
  EXPECT_EQ(counts.count(5), 3u);
  // 5 ×3, then 3 ×2, then 1 and 7 ×1 in id order, then the unseen 0, 2, 4, 6 in id order.
  EXPECT_EQ(counts.ordering([](int32_t) { return true; }), (std::vector<int32_t>{5, 3, 1, 7, 0, 2, 4, 6}));
  // Ids the vocabulary lacks are left out, seen or not.
  EXPECT_EQ(counts.ordering([](int32_t id) { return id != 3 && id != 4; }), (std::vector<int32_t>{5, 1, 7, 0, 2, 6}));
}

TEST(TokenCounts, CoverageOfTheFirstNIdsOfAMapAndOfTheIdOrder) {
  TokenCounts counts(8);
  counts.add(std::vector<int32_t>{5, 3, 5, 7, 3, 5, 1, 6});
  const std::vector<int32_t> map{5, 3, 1, 6, 7, 0, 2, 4};
  EXPECT_DOUBLE_EQ(counts.coverage(map, 0), 0.0);
  EXPECT_DOUBLE_EQ(counts.coverage(map, 1), 3.0 / 8);
  EXPECT_DOUBLE_EQ(counts.coverage(map, 2), 5.0 / 8);
  EXPECT_DOUBLE_EQ(counts.coverage(map, 100), 1.0);  // past the map's end: all of it
  EXPECT_DOUBLE_EQ(counts.coverage_below(2), 1.0 / 8);  // ids 0, 1
  EXPECT_DOUBLE_EQ(counts.coverage_below(6), 6.0 / 8);  // 1, 3, 3, 5, 5, 5
  EXPECT_DOUBLE_EQ(counts.coverage_below(100), 1.0);
  EXPECT_DOUBLE_EQ(TokenCounts(4).coverage_below(4), 0.0);  // nothing counted
}

}  // namespace
}  // namespace ds
