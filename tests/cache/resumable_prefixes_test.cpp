// ResumablePrefixes: the blocks it announces are exactly those some held snapshot covers while
// every block before that snapshot is cached in a family it can use — checked against the cache's
// own lookup (HybridCache::find_prefix) after every step of random traffic with evictions.
#include "cache/resumable_prefixes.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "cache/hybrid_cache.h"
#include "cache/prefix_key.h"
#include "kernels/ref/ref_backend.h"
#include "tiny_cache_geometry.h"

namespace ds::resumable_prefixes_test {
namespace {

RefBackend backend;

// The announced set, rebuilt from the observer's calls as a subscriber would, checking that
// every call is consistent with what came before.
struct Announced : ResumablePrefixObserver {
  std::map<uint64_t, std::vector<int32_t>> blocks;  // content key → its tokens
  int64_t stores = 0, removes = 0;
  void blocks_resumable(std::optional<uint64_t> parent, std::span<const uint64_t> keys,
                        std::span<const int32_t> tokens) override {
    ASSERT_EQ(tokens.size(), keys.size() * 16);
    if (parent) {
      EXPECT_TRUE(blocks.count(*parent)) << "the parent of an announced run is announced";
    }
    for (size_t i = 0; i < keys.size(); ++i) {
      EXPECT_FALSE(blocks.count(keys[i])) << "block announced twice";
      blocks[keys[i]].assign(tokens.begin() + static_cast<std::ptrdiff_t>(i * 16),
                             tokens.begin() + static_cast<std::ptrdiff_t>((i + 1) * 16));
    }
    ++stores;
  }
  void blocks_not_resumable(std::span<const uint64_t> keys) override {
    for (uint64_t key : keys) EXPECT_EQ(blocks.erase(key), 1u) << "removing a block never announced";
    ++removes;
  }
};

// What the cache can resume, asked of the cache itself: every full block of each held snapshot
// that a prompt extending it would resume exactly there.
std::set<uint64_t> resumable_by_lookup(const HybridCache& cache) {
  std::set<uint64_t> out;
  const SnapshotPool& pool = cache.snapshots();
  for (int32_t entry : pool.entries_by_age()) {
    std::vector<int32_t> prompt(pool.prefix(entry).begin(), pool.prefix(entry).end());
    const auto p = static_cast<int64_t>(prompt.size());
    prompt.push_back(1);
    const auto keys = cache.prefix_keys(prompt);
    if (cache.find_prefix(prompt, keys, p).tokens != p) continue;
    for (int64_t b = 0; b < p / 16; ++b) out.insert(keys[static_cast<size_t>((b + 1) * 16)]);
  }
  return out;
}

std::set<uint64_t> keys_of(const Announced& a) {
  std::set<uint64_t> out;
  for (const auto& [key, tokens] : a.blocks) out.insert(key);
  return out;
}

// Runs prompts the way the engine does: restore the longest hit, grow, snapshot at the policy's
// boundaries past the hit, key the blocks; a generation decodes a few tokens and takes its rule-4
// snapshot. Returns false (nothing done) when the cache cannot take the prompt now.
bool run(HybridCache& cache, SequenceCache& s, const std::vector<int32_t>& prompt, int64_t generate) {
  const auto keys = cache.prefix_keys(prompt);
  const auto n = static_cast<int64_t>(prompt.size());
  const PrefixHit hit = cache.find_prefix(prompt, keys, n - 1);
  const int64_t total = n + generate;
  if (cache.free_slots() == 0 || cache.free_blocks() - hit.unreferenced < cache.blocks_for(total) - hit.blocks) return false;
  CachePlan plan;
  if (hit.tokens > 0) plan.restore.push_back({&s, hit, prompt, keys});
  plan.grow.push_back({&s, n});
  cache.apply(plan);
  for (int64_t stop : cache.snapshot_positions(prompt))
    if (stop > hit.tokens) cache.cache_prefix(s, prompt, keys, stop, true);
  cache.cache_prefix(s, prompt, keys, n, false);
  if (generate > 0) {
    std::vector<int32_t> tokens = prompt;
    for (int64_t i = 0; i < generate; ++i) tokens.push_back(static_cast<int32_t>(20 + i % 7));
    CachePlan more;
    more.grow.push_back({&s, total - 1});
    cache.apply(more);
    cache.cache_generation(s, tokens, keys, total - 1);
  }
  return true;
}

TEST(ResumablePrefixes, AnnouncesExactlyWhatTheCacheCanResumeThroughRandomTraffic) {
  SnapshotPolicy policy;
  policy.message_start_tokens = {3};
  HybridCache cache(test::tiny_cache_geometry(), CacheCapacity{40, 2, 4}, backend, policy);
  Announced announced;
  announce_resumable_prefixes(cache, announced);

  std::mt19937 rng(7);
  auto random_tokens = [&](int64_t n) {
    std::vector<int32_t> t;
    for (int64_t i = 0; i < n; ++i) t.push_back(static_cast<int32_t>(rng() % 12 == 0 ? 3 : 4 + rng() % 40));
    return t;
  };
  std::vector<std::vector<int32_t>> conversations;  // prompts that later prompts continue or branch from
  for (int i = 0; i < 3; ++i) conversations.push_back(random_tokens(70 + 40 * i));
  SequenceCache live[2];
  int64_t runs = 0, checks = 0;
  for (int step = 0; step < 600; ++step) {
    const int slot = static_cast<int>(rng() % 2);
    if (!live[slot].empty()) {
      cache.release(live[slot]);
    } else {
      std::vector<int32_t>& base = conversations[rng() % conversations.size()];
      std::vector<int32_t> prompt(base.begin(), base.begin() + static_cast<std::ptrdiff_t>(rng() % (base.size() + 1)));
      const auto more = random_tokens(1 + static_cast<int64_t>(rng() % 90));
      prompt.insert(prompt.end(), more.begin(), more.end());
      if (prompt.size() > 320) prompt.resize(320);
      if (run(cache, live[slot], prompt, rng() % 3 == 0 ? 1 + static_cast<int64_t>(rng() % 40) : 0)) {
        ++runs;
        if (rng() % 2 == 0) base = prompt;  // the conversation goes on from here
      }
    }
    ASSERT_EQ(keys_of(announced), resumable_by_lookup(cache)) << "after step " << step;
    ++checks;
  }
  EXPECT_GT(runs, 200);
  EXPECT_GT(cache.block_evictions(), 50) << "the traffic must evict blocks";
  EXPECT_GT(cache.snapshots().evictions(), 50) << "the traffic must evict snapshots";
  EXPECT_GT(announced.removes, 20);
  for (SequenceCache& s : live) cache.release(s);
  EXPECT_EQ(keys_of(announced), resumable_by_lookup(cache));
}

// The tokens announced with a block are the tokens its key names, and a snapshot whose earlier
// block is evicted takes every block after it out of the announcement at once.
TEST(ResumablePrefixes, ABlockOrTheSnapshotBeyondItGoingRemovesTheAnnouncement) {
  HybridCache cache(test::tiny_cache_geometry(), CacheCapacity{20, 2, 8}, backend);
  Announced announced;
  announce_resumable_prefixes(cache, announced);
  std::vector<int32_t> prompt;
  for (int i = 0; i < 200; ++i) prompt.push_back(4 + (i * 5) % 40);
  SequenceCache a;
  ASSERT_TRUE(run(cache, a, prompt, 0));  // one snapshot, at 192: 12 blocks resumable
  ASSERT_EQ(announced.blocks.size(), 12u);
  const auto keys = prefix_keys(prompt, cache.geometry().identity());
  for (int b = 0; b < 12; ++b) {
    const auto& tokens = announced.blocks.at(keys[static_cast<size_t>((b + 1) * 16)]);
    EXPECT_TRUE(std::equal(tokens.begin(), tokens.end(), prompt.begin() + b * 16)) << "block " << b;
  }
  EXPECT_EQ(cache.cached_blocks(), 12) << "the 13th block is partial: cached blocks past the snapshot are not announced";
  cache.release(a);
  // Another sequence needs 9 blocks: the 8 keyless ones, then the prompt's last full block (block 11).
  SequenceCache other;
  CachePlan plan;
  plan.grow.push_back({&other, 9 * 16});
  cache.apply(plan);
  EXPECT_TRUE(announced.blocks.empty()) << "block 11 gone: the snapshot at 192 resumes nothing, so no block is resumable";
  cache.release(other);
}

}  // namespace
}  // namespace ds::resumable_prefixes_test
