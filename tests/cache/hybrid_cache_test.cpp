// HybridCache's prefix cache: a hit needs a snapshot and every KV block before it; apply shares
// the blocks and restores the state; released blocks stay findable until evicted.
#include "cache/hybrid_cache.h"

#include <gtest/gtest.h>

#include "kernels/ref/ref_backend.h"
#include "tiny_cache_geometry.h"

namespace ds {
namespace {

RefBackend backend;  // the caches' copies

std::vector<int32_t> tokens(int64_t n, int32_t seed) {
  std::vector<int32_t> t;
  for (int64_t i = 0; i < n; ++i) t.push_back(static_cast<int32_t>((i * 7 + seed) % 50));
  return t;
}

// Computes `prompt` into a fresh sequence of `cache` the way the engine does, writing a state that
// names the position so a restore can be checked.
void compute(HybridCache& cache, SequenceCache& s, std::span<const int32_t> prompt) {
  const auto keys = cache.prefix_keys(prompt);
  const auto snapshots = cache.snapshot_positions(prompt);
  CachePlan plan;
  plan.grow.push_back({&s, static_cast<int64_t>(prompt.size())});
  cache.apply(plan);
  for (int64_t stop : snapshots) {
    cache.states().recurrent(s.slot, 0)[0] = static_cast<float>(stop);
    cache.cache_prefix(s, prompt, keys, stop, true);
  }
  cache.cache_prefix(s, prompt, keys, static_cast<int64_t>(prompt.size()), false);
}

TEST(HybridCache, AHitIsTheLongestSnapshotWhoseBlocksAreAllCached) {
  CacheCapacity capacity{64, 2, 8};
  HybridCache cache(test::tiny_cache_geometry(), capacity, backend);
  ASSERT_TRUE(cache.prefix_caching());
  const std::vector<int32_t> first = tokens(300, 0);  // snapshots at 256 (prompt end)
  SequenceCache a;
  compute(cache, a, first);
  EXPECT_EQ(cache.cached_blocks(), 300 / 16);

  // A prompt sharing 280 tokens, then different: the hit is 256, its 16 blocks shared.
  std::vector<int32_t> second = first;
  second.resize(280);
  for (int i = 0; i < 40; ++i) second.push_back(49);
  const auto keys = cache.prefix_keys(second);
  PrefixHit hit = cache.find_prefix(second, keys, static_cast<int64_t>(second.size()) - 1);
  EXPECT_EQ(hit.tokens, 256);
  EXPECT_EQ(hit.blocks, 16);
  EXPECT_EQ(hit.unreferenced, 0) << "the first sequence still holds them";
  // A limit below the snapshot (e.g. the prompt is the snapshot's prefix itself): no hit.
  EXPECT_EQ(cache.find_prefix(second, keys, 255).tokens, 0);

  // Released, the blocks stay cached and count as free; a hit takes them back.
  cache.release(a);
  EXPECT_EQ(cache.free_blocks(), 64);
  hit = cache.find_prefix(second, keys, static_cast<int64_t>(second.size()) - 1);
  EXPECT_EQ(hit.unreferenced, 16);
  SequenceCache b;
  CachePlan plan;
  plan.restore.push_back({&b, hit, second, keys});
  plan.grow.push_back({&b, static_cast<int64_t>(second.size())});
  cache.apply(plan);
  EXPECT_EQ(b.keyed_blocks, 16);
  EXPECT_EQ(cache.states().recurrent(b.slot, 0)[0], 256.0f) << "the snapshot's state is restored";
  EXPECT_EQ(cache.free_blocks(), 64 - 20) << "16 shared + 4 new blocks";
  cache.release(b);
  EXPECT_EQ(cache.free_blocks(), 64);
}

TEST(HybridCache, NoHitWithoutEveryBlockOrWithoutASnapshot) {
  CacheCapacity capacity{20, 2, 8};
  HybridCache cache(test::tiny_cache_geometry(), capacity, backend);
  const std::vector<int32_t> prompt = tokens(200, 3);  // snapshot at 192
  SequenceCache a;
  compute(cache, a, prompt);
  cache.release(a);
  const auto keys = cache.prefix_keys(prompt);
  EXPECT_EQ(cache.find_prefix(prompt, keys, 199).tokens, 192);
  // Another sequence takes 9 blocks: the 8 keyless ones (7 never used + the partial last block),
  // then the least recently released cached block — the prompt's last full block, since a table is
  // released tail first.
  SequenceCache other;
  CachePlan plan;
  plan.grow.push_back({&other, 9 * 16});
  cache.apply(plan);
  EXPECT_EQ(cache.block_evictions(), 1);
  EXPECT_EQ(cache.find_prefix(prompt, keys, 199).tokens, 0) << "a block before the snapshot is gone";
  cache.release(other);

  CacheCapacity no_snapshots{20, 2, 0};
  HybridCache off(test::tiny_cache_geometry(), no_snapshots, backend);
  EXPECT_FALSE(off.prefix_caching());
  EXPECT_TRUE(off.prefix_keys(prompt).empty());
  EXPECT_EQ(off.find_prefix(prompt, {}, 199).tokens, 0);
}

// The KV of position p in a sequence (tiny geometry: one value per position and layer).
float& kv_at(HybridCache& cache, const SequenceCache& s, int64_t p) {
  return *cache.kv().layer(0).key_column<float>(s.blocks[static_cast<size_t>(p / 16)], p % 16, 0);
}

// Rule 4: a generation that stopped at 130 tokens (100 prompt + 30 decoded) is snapshotted there,
// with the filled part of its last block; a prompt that continues it starts from 130, a decoded
// hit. The exact lookup never sees what decoding computed, and a sequence started from a decoded
// hit publishes decoded keys only.
TEST(HybridCache, AFinishedGenerationIsADecodedHitWithItsTail) {
  HybridCache cache(test::tiny_cache_geometry(), CacheCapacity{64, 2, 8}, backend);
  const std::vector<int32_t> generated = tokens(131, 5);  // 100 prompt + 31 sampled (the last not computed)
  const std::span<const int32_t> prompt = std::span(generated).first(100);
  SequenceCache a;
  compute(cache, a, prompt);  // snapshot at 64 (prompt end)
  CachePlan decode;
  decode.grow.push_back({&a, 130});
  cache.apply(decode);
  for (int64_t p = 0; p < 130; ++p) kv_at(cache, a, p) = static_cast<float>(p);
  cache.states().recurrent(a.slot, 0)[0] = 130.0f;
  cache.cache_generation(a, generated, cache.prefix_keys(prompt), 130);
  const int32_t partial = a.blocks[8];
  cache.release(a);
  for (int64_t slot = 0; slot < 16; ++slot) *cache.kv().layer(0).key_column<float>(partial, slot, 0) = -1.0f;
  EXPECT_EQ(cache.snapshots().size(), 2);
  EXPECT_EQ(cache.snapshots().decoded(), 1);

  std::vector<int32_t> next = generated;  // the client sends prompt + completion back, and more
  for (int i = 0; i < 20; ++i) next.push_back(7);
  const auto keys = cache.prefix_keys(next);
  const PrefixHit hit = cache.find_prefix(next, keys, static_cast<int64_t>(next.size()) - 1);
  EXPECT_EQ(hit.tokens, 130);
  EXPECT_EQ(hit.blocks, 8);
  EXPECT_FALSE(hit.exact);
  EXPECT_EQ(hit.unreferenced, 8);
  EXPECT_EQ(cache.find_prefix(next, keys, 129).tokens, 64) << "below it, the prompt's exact snapshot";
  EXPECT_TRUE(cache.find_prefix(next, keys, 129).exact);

  SequenceCache b;
  CachePlan plan;
  plan.restore.push_back({&b, hit, next, keys});
  plan.grow.push_back({&b, static_cast<int64_t>(next.size())});
  cache.apply(plan);
  EXPECT_FALSE(b.exact);
  EXPECT_EQ(cache.states().recurrent(b.slot, 0)[0], 130.0f);
  ASSERT_EQ(b.blocks.size(), 10u);
  for (int64_t p : {0, 64, 127, 128, 129}) EXPECT_EQ(kv_at(cache, b, p), static_cast<float>(p)) << "position " << p;
  EXPECT_EQ(cache.states().recurrent(b.slot, 0)[0], 130.0f);
  // b computes to its end and is snapshotted there (a grid position of its prompt would be too):
  // all of it decoded, so an exact lookup of the same tokens still stops at 64.
  for (int64_t p = 130; p < 150; ++p) kv_at(cache, b, p) = static_cast<float>(p);
  cache.cache_prefix(b, next, keys, 150, false);
  EXPECT_EQ(b.keyed_blocks, 9);
  cache.release(b);
  std::vector<int32_t> other(next.begin(), next.begin() + 144);
  other.push_back(9);
  const auto other_keys = cache.prefix_keys(other);
  EXPECT_EQ(cache.find_prefix(other, other_keys, 144).tokens, 130) << "the decoded snapshot, b's blocks decoded";
  EXPECT_EQ(cache.free_blocks(), 64);
}

// A bf16 KV block is half an fp32 one, so the same budget holds twice the tokens (the state slots,
// fp32 either way, take the same share), and the pool the cache allocates is bf16.
TEST(HybridCache, Bf16KvHoldsTwiceTheTokensOfOneBudget) {
  CacheGeometry fp32 = test::tiny_cache_geometry();
  fp32.attention_layers = 6, fp32.num_kv_heads = 2, fp32.head_dim = 256;
  CacheGeometry bf16 = fp32;
  bf16.kv_dtype = KvDtype::bf16;
  EXPECT_EQ(fp32.block_bytes(), uint64_t{2} * 6 * 16 * 2 * 256 * 4);
  EXPECT_EQ(bf16.block_bytes() * 2, fp32.block_bytes());
  const uint64_t budget = uint64_t{64} << 20;
  const auto wide = size_cache(fp32, budget, 4), narrow = size_cache(bf16, budget, 4);
  ASSERT_TRUE(wide.ok() && narrow.ok());
  EXPECT_EQ(narrow->num_slots, wide->num_slots);
  EXPECT_GE(narrow->num_blocks, 2 * wide->num_blocks);
  EXPECT_LE(narrow->num_blocks, 2 * wide->num_blocks + 1);
  HybridCache cache(bf16, *narrow, backend);
  EXPECT_EQ(cache.kv().dtype(), KvDtype::bf16);
  EXPECT_EQ(cache.kv_bytes(), static_cast<uint64_t>(narrow->num_blocks) * bf16.block_bytes());
}

// With speculative decoding every sequence's state takes two slots — its own and the spare a verify
// writes into — both counted in the budget; a sequence takes its spare with its slot and gives both
// back, and a slot and its spare trade storage in O(1) (no copy) while keeping their ids.
TEST(HybridCache, SpareSlotsAreBudgetedTakenWithTheSlotAndTradeStorage) {
  CacheGeometry g = test::tiny_cache_geometry();
  g.num_v_heads = 4, g.k_dim = g.v_dim = 128;  // a 256 KiB state: the slots' share binds
  const uint64_t budget = 8 * g.slot_bytes() + 64 * g.block_bytes();
  const auto plain = size_cache(g, budget, 16), spare = size_cache(g, budget, 16, 0, /*spare_slots=*/true);
  ASSERT_TRUE(plain.ok() && spare.ok());
  EXPECT_EQ(plain->num_slots, 4);  // half the budget in slots
  EXPECT_EQ(plain->num_spare_slots, 0);
  EXPECT_EQ(spare->num_slots, 2);
  EXPECT_EQ(spare->num_spare_slots, 2);
  EXPECT_LE(static_cast<uint64_t>(spare->num_slots + spare->num_spare_slots) * g.slot_bytes() +
                static_cast<uint64_t>(spare->num_blocks) * g.block_bytes(),
            budget);
  const auto too_small = size_cache(g, g.slot_bytes() + 64 * g.block_bytes(), 1, 0, true);
  ASSERT_FALSE(too_small.ok());
  EXPECT_NE(too_small.status().message().find("two DeltaNet state slots"), std::string::npos) << too_small.status().message();

  HybridCache cache(g, *spare, backend);
  SequenceCache a, b;
  CachePlan plan;
  plan.grow = {{&a, 10}, {&b, 10}};
  cache.apply(plan);
  ASSERT_GE(a.spare, 0);
  ASSERT_GE(b.spare, 0);
  EXPECT_EQ(cache.free_slots(), 0);  // spares are not sequences' slots
  for (int32_t id : {a.slot, b.slot}) {
    EXPECT_NE(id, a.spare);
    EXPECT_NE(id, b.spare);
  }
  DeltaNetStateSlots& states = cache.states();
  states.recurrent(a.slot, 0)[5] = 1.0f;
  states.recurrent(a.spare, 0)[5] = 2.0f;
  states.conv(a.spare, 0)[0] = 3.0f;
  float* spare_storage = states.recurrent(a.spare, 0);
  const int32_t slot_id = a.slot, spare_id = a.spare;
  states.swap(a.slot, a.spare);
  EXPECT_EQ(a.slot, slot_id);
  EXPECT_EQ(a.spare, spare_id);
  EXPECT_EQ(states.recurrent(a.slot, 0), spare_storage);
  EXPECT_EQ(states.recurrent(a.slot, 0)[5], 2.0f);
  EXPECT_EQ(states.conv(a.slot, 0)[0], 3.0f);
  EXPECT_EQ(states.recurrent(a.spare, 0)[5], 1.0f);
  cache.release(a);
  EXPECT_EQ(a.slot, -1);
  EXPECT_EQ(a.spare, -1);
  EXPECT_EQ(cache.free_slots(), 1);
  SequenceCache c;  // the freed slot and spare go to the next sequence
  plan.grow = {{&c, 10}};
  cache.apply(plan);
  EXPECT_GE(c.slot, 0);
  EXPECT_GE(c.spare, 0);
  EXPECT_EQ(states.recurrent(c.slot, 0)[5], 0.0f) << "a slot handed out holds the empty state";
}

}  // namespace
}  // namespace ds
