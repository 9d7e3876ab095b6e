// Paged attention: each CPU build (AVX2, AVX-512; 1–3 threads), whose kernel is tiled
// (attention_tiled.inc), is bit-identical to the reference loops (attention.inc) on odd shapes —
// head_dim with tails, partial, tiny (key lanes gathered) and large blocks, a shuffled block table,
// start_pos 0 and > 0, a single query and more queries than a tile holds, GQA groups of 1, 3, 4 and
// 6 heads — and the tile size (the scratch the caller gives) changes no bit; all of it for fp32 and
// bf16 caches. The scalar ISA runs the reference itself, so it has nothing to compare. A bf16 cache
// holds K and V rounded to nearest even and attends exactly as an fp32 cache holding those rounded
// values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "cache/kv_block_pool.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/portable_kernels.h"
#include "isa_test.h"
#include "kernels/ref/ref_backend.h"
#include "test_util.h"
#include "util/float16.h"
#include "util/random.h"

namespace ds {
namespace {

std::vector<float> random_vector(size_t n, uint64_t seed) { return test::random_floats(n, seed, -2.0f, 2.0f); }

struct Shape {
  int64_t heads, kv_heads, head_dim, start_pos, n, block_size;
};

// One sequence's cache filled with positions 0 .. start_pos + n − 1 through a shuffled block table.
// round_to_bf16: the keys and values are rounded to bf16 before kv_write (as a bf16 cache stores them).
struct Case {
  explicit Case(const Shape& s, KvDtype dtype = KvDtype::fp32, bool round_to_bf16 = false)
      : shape(s),
        blocks((s.start_pos + s.n + s.block_size - 1) / s.block_size),
        pool(blocks + 3, s.block_size, 1, s.kv_heads, s.head_dim, dtype),
        table(static_cast<size_t>(blocks)),
        q(random_vector(s.n * s.heads * s.head_dim, 3)) {
    std::iota(table.begin(), table.end(), 3);  // leave blocks 0 .. 2 unused
    Xoshiro256 rng(4);
    for (size_t i = table.size(); i > 1; --i) std::swap(table[i - 1], table[rng.next() % i]);
    const int64_t tokens = s.start_pos + s.n, row = s.kv_heads * s.head_dim;
    keys = random_vector(tokens * row, 5), values = random_vector(tokens * row, 6);
    if (round_to_bf16)
      for (auto* data : {&keys, &values})
        for (float& x : *data) x = bf16_to_float(float_to_bf16(x));
    RefBackend().kv_write(keys.data(), values.data(), tokens, 0, table.data(), pool.layer(0));
  }
  std::vector<float> run(Backend& backend) {
    std::vector<float> out(q.size());
    backend.attention(q.data(), shape.n, shape.start_pos, shape.heads, table.data(), pool.layer(0), 0.3f, out.data());
    return out;
  }

  Shape shape;
  int64_t blocks;
  KvBlockPool pool;
  std::vector<int32_t> table;
  std::vector<float> q;  // [n, heads, head_dim]
  std::vector<float> keys, values;  // [start_pos + n, kv_heads, head_dim] as given to kv_write
};

const KvDtype kDtypes[] = {KvDtype::fp32, KvDtype::bf16};

const Shape kShapes[] = {
    {6, 2, 40, 20, 7, 16},    // head_dim tail of 8, the last block partial
    {8, 2, 256, 0, 37, 16},   // the 2B's heads, three tiles of query positions from position 0
    {8, 2, 72, 45, 1, 16},    // one decode query; head_dim = 64 + 8
    {6, 1, 48, 33, 19, 4},    // GQA group of 6 (register tiles of 4 + 2 heads), blocks of 4
    {3, 3, 17, 5, 3, 2},      // no GQA, head_dim 16 + 1, blocks of 2
    {12, 4, 128, 100, 24, 8}, // group of 3
    {8, 2, 256, 150, 45, 16}, // several key blocks, a partial tile of query positions
    {8, 2, 64, 70, 9, 64},    // blocks of 64: several key vectors per cache block
    {4, 1, 24, 3, 4, 1},      // blocks of 1: every key gathered from its own block
};

class CpuAttention : public test::IsaTest {};

TEST_P(CpuAttention, IsBitIdenticalToReference) {
  for (const KvDtype dtype : kDtypes)
    for (const Shape& s : kShapes) {
      Case c(s, dtype);
      RefBackend ref;
      const auto expected = c.run(ref);
      for (int threads : {1, 2, 3}) {
        CpuBackend cpu(GetParam(), threads);
        EXPECT_EQ(c.run(cpu), expected) << cpu.name() << ", " << kv_dtype_name(dtype) << " KV, heads " << s.heads
                                        << ", head_dim " << s.head_dim;
      }
    }
}

TEST_P(CpuAttention, TileSizeChangesNoBit) {
  const kernels::PortableKernels& build =
      GetParam() == Isa::avx512 ? kernels::portable_kernels_avx512() : kernels::portable_kernels_avx2();
  for (const KvDtype dtype : kDtypes)
    for (const Shape& s : kShapes) {
      Case c(s, dtype);
      const int64_t group = s.heads / s.kv_heads;
      std::vector<float> expected;
      for (const int64_t positions : {int64_t{1}, int64_t{3}, kernels::kAttentionTilePositions}) {
        const int64_t floats = kernels::attention_tile_floats(positions, group, s.start_pos + s.n);
        std::vector<float> scores(static_cast<size_t>(floats)), out(c.q.size());
        build.attention(c.q.data(), s.n, s.start_pos, s.heads, c.table.data(), c.pool.layer(0), 0.3f, out.data(), 0,
                        s.heads, scores.data(), static_cast<int64_t>(scores.size()));
        if (expected.empty()) expected = out;
        else EXPECT_EQ(out, expected) << positions << " positions per tile, heads " << s.heads << ", "
                                      << kv_dtype_name(dtype) << " KV";
      }
    }
}

// kv_write into a bf16 cache stores each K and V element rounded to nearest even (float_to_bf16,
// torch's .to(bfloat16)), at the same places an fp32 cache stores the unrounded ones.
TEST(Bf16KvCache, WriteRoundsToNearestEven) {
  const Shape s{6, 2, 40, 20, 7, 16};
  Case fp32(s, KvDtype::fp32), bf16(s, KvDtype::bf16);
  const KvLayerView wide = fp32.pool.layer(0), narrow = bf16.pool.layer(0);
  int64_t rounded = 0;
  for (int64_t pos = 0; pos < s.start_pos + s.n; ++pos) {
    const int32_t block = fp32.table[static_cast<size_t>(pos / s.block_size)];
    const int64_t slot = pos % s.block_size;
    for (int64_t h = 0; h < s.kv_heads; ++h)
      for (int64_t d = 0; d < s.head_dim; ++d) {
        const float key = wide.key_column<float>(block, slot, h)[d * s.block_size];
        const float value = wide.value_row<float>(block, slot, h)[d];
        ASSERT_EQ(key, fp32.keys[static_cast<size_t>((pos * s.kv_heads + h) * s.head_dim + d)]);
        EXPECT_EQ(narrow.key_column<uint16_t>(block, slot, h)[d * s.block_size], float_to_bf16(key));
        EXPECT_EQ(narrow.value_row<uint16_t>(block, slot, h)[d], float_to_bf16(value));
        rounded += bf16_to_float(float_to_bf16(key)) != key;
      }
  }
  EXPECT_GT(rounded, 0) << "the random keys should need rounding";
  EXPECT_EQ(bf16.pool.bytes() * 2, fp32.pool.bytes());
}

// Widening is exact: a bf16 cache gives bit for bit what an fp32 cache holding the same rounded
// values gives, on the reference (here) and on each CPU build (CpuAttention.Bf16AttendsAsRoundedFp32).
TEST(Bf16KvCache, AttendsExactlyAsFp32HoldingTheRoundedValues) {
  for (const Shape& s : kShapes) {
    Case rounded(s, KvDtype::fp32, true), bf16(s, KvDtype::bf16);
    RefBackend ref;
    const auto expected = rounded.run(ref);
    EXPECT_EQ(bf16.run(ref), expected) << "reference, heads " << s.heads << ", head_dim " << s.head_dim;
    EXPECT_NE(Case(s).run(ref), expected) << "rounding K and V to bf16 should change the output";
  }
}

TEST_P(CpuAttention, Bf16AttendsAsRoundedFp32) {
  for (const Shape& s : kShapes) {
    Case rounded(s, KvDtype::fp32, true), bf16(s, KvDtype::bf16);
    CpuBackend cpu(GetParam(), 2);
    EXPECT_EQ(bf16.run(cpu), rounded.run(cpu)) << cpu.name() << ", heads " << s.heads << ", head_dim " << s.head_dim;
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, CpuAttention, ::testing::Values(Isa::avx2, Isa::avx512),
                         test::isa_param_name);

}  // namespace
}  // namespace ds
