// Paged attention: each CPU build (AVX2, AVX-512; 1–3 threads), whose kernel is tiled
// (attention_tiled.inc), is bit-identical to the reference loops (attention.inc) on odd shapes —
// head_dim with tails, partial, tiny (key lanes gathered) and large blocks, a shuffled block table,
// start_pos 0 and > 0, a single query and more queries than a tile holds, GQA groups of 1, 3, 4 and
// 6 heads — and the tile size (the scratch the caller gives) changes no bit. The scalar ISA runs
// the reference itself, so it has nothing to compare.
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
#include "util/random.h"

namespace ds {
namespace {

std::vector<float> random_vector(size_t n, uint64_t seed) { return test::random_floats(n, seed, -2.0f, 2.0f); }

struct Shape {
  int64_t heads, kv_heads, head_dim, start_pos, n, block_size;
};

// One sequence's cache filled with positions 0 .. start_pos + n − 1 through a shuffled block table.
struct Case {
  explicit Case(const Shape& s)
      : shape(s),
        blocks((s.start_pos + s.n + s.block_size - 1) / s.block_size),
        pool(blocks + 3, s.block_size, 1, s.kv_heads, s.head_dim),
        table(static_cast<size_t>(blocks)),
        q(random_vector(s.n * s.heads * s.head_dim, 3)) {
    std::iota(table.begin(), table.end(), 3);  // leave blocks 0 .. 2 unused
    Xoshiro256 rng(4);
    for (size_t i = table.size(); i > 1; --i) std::swap(table[i - 1], table[rng.next() % i]);
    const int64_t tokens = s.start_pos + s.n, row = s.kv_heads * s.head_dim;
    const auto keys = random_vector(tokens * row, 5), values = random_vector(tokens * row, 6);
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
};

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
  for (const Shape& s : kShapes) {
    Case c(s);
    RefBackend ref;
    const auto expected = c.run(ref);
    for (int threads : {1, 2, 3}) {
      CpuBackend cpu(GetParam(), threads);
      EXPECT_EQ(c.run(cpu), expected) << cpu.name() << ", heads " << s.heads << ", head_dim " << s.head_dim;
    }
  }
}

TEST_P(CpuAttention, TileSizeChangesNoBit) {
  const kernels::PortableKernels& build =
      GetParam() == Isa::avx512 ? kernels::portable_kernels_avx512() : kernels::portable_kernels_avx2();
  for (const Shape& s : kShapes) {
    Case c(s);
    const int64_t group = s.heads / s.kv_heads;
    std::vector<float> expected;
    for (const int64_t positions : {int64_t{1}, int64_t{3}, kernels::kAttentionTilePositions}) {
      const int64_t floats = kernels::attention_tile_floats(positions, group, s.start_pos + s.n);
      std::vector<float> scores(static_cast<size_t>(floats)), out(c.q.size());
      build.attention(c.q.data(), s.n, s.start_pos, s.heads, c.table.data(), c.pool.layer(0), 0.3f, out.data(), 0,
                      s.heads, scores.data(), static_cast<int64_t>(scores.size()));
      if (expected.empty()) expected = out;
      else EXPECT_EQ(out, expected) << positions << " positions per tile, heads " << s.heads;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, CpuAttention, ::testing::Values(Isa::avx2, Isa::avx512),
                         test::isa_param_name);

}  // namespace
}  // namespace ds
