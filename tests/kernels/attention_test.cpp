// Paged attention: each CPU build (AVX2, AVX-512; 1–3 threads), whose kernel is tiled
// (attention_tiled.inc), is bit-identical to the reference loops (attention.inc) on odd shapes —
// head_dim with tails, partial, tiny (key lanes gathered) and large blocks, a shuffled block table,
// start_pos 0 and > 0, a single query and more queries than a tile holds, GQA groups of 1, 3, 4 and
// 6 heads — and the tile size (the scratch the caller gives) changes no bit; all of it for fp32 and
// bf16 caches (bf16: even head_dims only, as the cache requires). The scalar ISA runs the reference
// itself, so it has nothing to compare. A bf16 cache holds K and V rounded to nearest even, keys in
// dim pairs; its scores use the query rounded to bf16 and add each pair's products odd dim first
// (what the AVX-512 build's `vdpbf16ps` computes), so it attends as an fp32 cache holding the rounded
// values would up to the summation order of the scores, which the tests bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "cache/kv_block_pool.h"
#include "kernels/cpu/attention_amx.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/portable_kernels.h"
#include "isa_test.h"
#include "kernels/portable_exp.h"
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
  std::vector<float> run(Backend& backend, float scale = 0.3f) {
    std::vector<float> out(q.size());
    backend.attention(q.data(), shape.n, shape.start_pos, shape.heads, table.data(), pool.layer(0), scale, out.data());
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

// The bf16 cache keeps keys in dim pairs, so it takes even head_dims only.
bool runs(const Shape& s, KvDtype dtype) { return dtype == KvDtype::fp32 || s.head_dim % 2 == 0; }

TEST_P(CpuAttention, IsBitIdenticalToReference) {
  for (const KvDtype dtype : kDtypes)
    for (const Shape& s : kShapes) {
      if (!runs(s, dtype)) continue;
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
      if (!runs(s, dtype)) continue;
      Case c(s, dtype);
      const int64_t group = s.heads / s.kv_heads;
      std::vector<float> expected;
      for (const int64_t positions : {int64_t{1}, int64_t{3}, kernels::kAttentionTilePositions}) {
        const int64_t floats = kernels::attention_tile_floats(positions, group, s.start_pos + s.n, s.head_dim);
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
// torch's .to(bfloat16)): V at the places an fp32 cache stores it, K in dim pairs — key s's dims
// (2j, 2j + 1) side by side, at 2s, 2s + 1 of word row j (backend.h).
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
        const uint16_t* head = static_cast<const uint16_t*>(narrow.k) + block * narrow.block_stride +
                               h * s.head_dim * s.block_size;  // written out from the layout, not the accessors
        EXPECT_EQ(head[d / 2 * 2 * s.block_size + 2 * slot + d % 2], float_to_bf16(key));
        EXPECT_EQ(narrow.value_row<uint16_t>(block, slot, h)[d], float_to_bf16(value));
        rounded += bf16_to_float(float_to_bf16(key)) != key;
      }
  }
  EXPECT_GT(rounded, 0) << "the random keys should need rounding";
  EXPECT_EQ(bf16.pool.bytes() * 2, fp32.pool.bytes());
}

// The bf16 cache's arithmetic, restated in plain loops here (not the reference's): the query
// rounded to bf16, each score the pairs' exact products added odd dim first, then the fp32 softmax
// and weighted sum of the widened V rows. The reference gives these bits; an fp32 cache holding the
// rounded K and V agrees within the scores' reordering (a few ulps of the output), and unrounded
// values differ by more (so the rounding is really there).
// Not inlined, so that GCC 12.2's -O3 loop vectoriser, which miscompiles the two-accumulation loop
// below, leaves it scalar (attention.inc has the same guard).
[[gnu::noinline]] float plus_product(float acc, float a, float b) { return acc + a * b; }

std::vector<float> bf16_attention_by_hand(const Case& c, float scale) {
  const Shape& s = c.shape;
  const int64_t group = s.heads / s.kv_heads, D = s.head_dim, row = s.kv_heads * D;
  auto round = [](float x) { return bf16_to_float(float_to_bf16(x)); };
  std::vector<float> out(c.q.size());
  for (int64_t i = 0; i < s.n; ++i)
    for (int64_t h = 0; h < s.heads; ++h) {
      const float* q = c.q.data() + (i * s.heads + h) * D;
      const int64_t kvh = h / group, last = s.start_pos + i;
      std::vector<float> score(static_cast<size_t>(last + 1));
      float max_score = -INFINITY, total = 0.0f;
      for (int64_t p = 0; p <= last; ++p) {
        const float* k = c.keys.data() + p * row + kvh * D;
        float dot = 0.0f;
        for (int64_t d = 0; d < D; d += 2) {
          dot = plus_product(dot, round(q[d + 1]), round(k[d + 1]));
          dot = plus_product(dot, round(q[d]), round(k[d]));
        }
        score[p] = dot * scale;
        max_score = std::max(max_score, score[p]);
      }
      for (float& e : score) total += e = portable_exp(e - max_score);
      float* o = out.data() + (i * s.heads + h) * D;
      for (int64_t p = 0; p <= last; ++p)
        for (int64_t d = 0; d < D; ++d) o[d] += score[p] / total * round(c.values[p * row + kvh * D + d]);
    }
  return out;
}

TEST(Bf16KvCache, AttendsWithBf16QueriesAndPairedScoresAsDefined) {
  int64_t checked = 0;
  for (const Shape& s : kShapes) {
    if (!runs(s, KvDtype::bf16)) continue;
    Case bf16(s, KvDtype::bf16), rounded(s, KvDtype::fp32, true), exact(s);
    RefBackend ref;
    EXPECT_EQ(bf16.run(ref), bf16_attention_by_hand(bf16, 0.3f)) << "reference, heads " << s.heads << ", head_dim "
                                                                  << s.head_dim;
    // The model's scale: scores of about unit spread, not a near-argmax softmax whose near-ties a
    // rounded q may swap.
    const float scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
    const auto out = bf16.run(ref, scale), near = rounded.run(ref, scale), far = exact.run(ref, scale);
    double near_error = 0, far_error = 0;
    for (size_t e = 0; e < out.size(); ++e) {
      near_error = std::max(near_error, std::fabs(static_cast<double>(out[e]) - near[e]));
      far_error = std::max(far_error, std::fabs(static_cast<double>(out[e]) - far[e]));
    }
    // Rounding q moves a score by about 2^-9 of Σ|q·k| · scale (≈ 0.003 here) and the weights by as
    // much relatively; the output (|v| <= 2) by less than 0.02.
    EXPECT_LT(near_error, 0.02) << "heads " << s.heads << ", head_dim " << s.head_dim;
    EXPECT_GT(far_error, 0.0) << "rounding K and V to bf16 should change the output";
    ++checked;
  }
  EXPECT_EQ(checked, 8);
}

// AMX (kernels/cpu/attention_amx.h): on a bf16 cache whose head_dim is a multiple of 32 and blocks
// of a multiple of 16 tokens, the kernel gives what attention_amx_reference.cpp defines, value for
// value — decode, prefill from position 0, several key blocks, tails of 16-key tiles and 32-key
// value steps, GQA groups of 1, 3, 4 and 6, head_dims of one and several 64-dim passes, 1–3 threads;
// a query's bits do not depend on the queries beside it; the definition stays within the bf16
// weights' rounding of attention.inc's; other caches keep the AVX-512 kernels, bit for bit.
const Shape kAmxShapes[] = {
    {8, 2, 256, 0, 37, 16},    // the 2B's heads from position 0: three 16-row tiles of a group
    {8, 2, 256, 150, 45, 16},  // several key blocks, the last partial
    {4, 4, 32, 0, 1, 16},      // one query at position 0: one key, no GQA, one 32-dim value pass
    {8, 2, 64, 70, 9, 64},     // blocks of 64 tokens
    {6, 1, 96, 33, 19, 32},    // a group of 6; head_dim 64 + 32
    {12, 4, 128, 100, 24, 16}, // a group of 3: rows not a multiple of 16
    {8, 2, 256, 1000, 1, 16},  // decode at position 1,000
};

class AmxAttention : public ::testing::Test {
 protected:
  void SetUp() override {
    if (detect_isa() < Isa::amx)
      GTEST_SKIP() << "this CPU has no AMX (" << amx_unavailable_reason() << "): the AMX attention is not checked here";
  }
};

std::vector<float> amx_reference(Case& c, float scale = 0.3f) {
  std::vector<float> out(c.q.size());
  kernels::attention_amx_reference(c.q.data(), c.shape.n, c.shape.start_pos, c.shape.heads, c.table.data(),
                                   c.pool.layer(0), scale, out.data());
  return out;
}

TEST_F(AmxAttention, EqualsItsReference) {
  for (const Shape& s : kAmxShapes) {
    Case c(s, KvDtype::bf16);
    ASSERT_TRUE(kernels::attention_amx_supports(c.pool.layer(0)));
    const auto expected = amx_reference(c);
    for (int threads : {1, 2, 3}) {
      CpuBackend cpu(Isa::amx, threads);
      EXPECT_EQ(c.run(cpu), expected) << threads << " threads, heads " << s.heads << ", head_dim " << s.head_dim
                                      << ", start " << s.start_pos << ", n " << s.n;
    }
  }
}

TEST_F(AmxAttention, QueryBitsDoNotDependOnTheBatch) {
  const Shape s{8, 2, 256, 150, 45, 16};
  Case c(s, KvDtype::bf16);
  CpuBackend cpu(Isa::amx, 2);
  const auto batch = c.run(cpu);
  const int64_t row = s.heads * s.head_dim;
  for (int64_t i : {0, 15, 16, 31, 44}) {
    std::vector<float> alone(static_cast<size_t>(row));
    cpu.attention(c.q.data() + i * row, 1, s.start_pos + i, s.heads, c.table.data(), c.pool.layer(0), 0.3f, alone.data());
    EXPECT_EQ(0, std::memcmp(alone.data(), batch.data() + i * row, alone.size() * sizeof(float))) << "query " << i;
  }
}

TEST_F(AmxAttention, StaysWithinTheWeightRoundingOfTheDefinition) {
  for (const Shape& s : kAmxShapes) {
    Case c(s, KvDtype::bf16);
    const float scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
    RefBackend ref;
    const auto amx = amx_reference(c, scale), standard = c.run(ref, scale);
    double error = 0;
    for (size_t e = 0; e < amx.size(); ++e) error = std::max(error, std::fabs(static_cast<double>(amx[e]) - standard[e]));
    // Weights rounded to bf16 move each by 2^-9 relatively: Σ w · |v| · 2^-9 ≤ 2 · 2^-9 ≈ 0.004, and
    // the scores' other order a few ulps.
    EXPECT_LT(error, 0.005) << "heads " << s.heads << ", head_dim " << s.head_dim;
    if (s.start_pos + s.n > 1) {  // one key alone has weight 1, exact in bf16
      EXPECT_GT(error, 0.0) << "the bf16 weights should change something, head_dim " << s.head_dim;
    }
  }
}

TEST_F(AmxAttention, OtherCachesKeepTheAvx512Kernels) {
  int64_t checked = 0;
  for (const KvDtype dtype : kDtypes)
    for (const Shape& s : kShapes) {
      if (!runs(s, dtype)) continue;
      Case c(s, dtype);
      if (kernels::attention_amx_supports(c.pool.layer(0))) continue;
      RefBackend ref;
      CpuBackend cpu(Isa::amx, 2);
      EXPECT_EQ(c.run(cpu), c.run(ref)) << kv_dtype_name(dtype) << " KV, head_dim " << s.head_dim << ", blocks of "
                                        << s.block_size;
      ++checked;
    }
  EXPECT_GE(checked, 10);
}

INSTANTIATE_TEST_SUITE_P(Isas, CpuAttention, ::testing::Values(Isa::avx2, Isa::avx512),
                         test::isa_param_name);

}  // namespace
}  // namespace ds
