// AVX2 + FMA matmul on weights in the bf16 panel layout (bf16_panels.h), compiled with -mavx2 -mfma
// and called only after detect_isa: how bf16 weights run on CPUs without AVX-512 BF16.
//
// Outer-product form, as the AVX-512 kernel's: 32 bytes of a panel's pair block hold 8 output rows ×
// one input pair. A bf16 is the top half of an fp32, so shifting each 32-bit word left by 16 gives the
// 8 rows' even inputs as fp32 and clearing its low half gives the odd ones: one integer op per 8
// weights, whose result feeds the FMAs of every token of the tile (the token's input broadcast).
// Every lane is one output, so there are no horizontal sums.
//
// Every output is one fp32 FMA chain that starts at 0 and takes its inputs in order
// (bf16_panels_fma_reference.cpp writes it down), whatever the tile, the batch, the thread split or
// the blocking: a block of pairs ends by storing the accumulators to y and the next one loads them
// back, which changes no bit. So a row's result never depends on the batch (tested).
//
// Tiles are R tokens × 8·Q rows: R·Q accumulators beside 2·Q widened weights and a broadcast in
// AVX2's 16 registers; a chain takes two dependent FMAs per pair, so a tile needs many chains to
// cover the FMA latency.
#include <immintrin.h>

#include <algorithm>

#include "kernels/formats/bf16_panels/bf16_panels.h"
#include "kernels/formats/bf16_panels/bf16_panels_kernels.h"
#include "util/check.h"
#include "util/float16.h"

namespace ds::kernels {
namespace {

// Lanes [0, count) set: the rows of a partial panel's last vector that exist.
inline __m256i first_lanes(int64_t count) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// y[r, 0 .. 8Q) (+)= Σ_j x[r, 2j .. 2j + 1] · w's pair j, for tokens r < R; rows from `rows` on are
// neither read nor written. x: the tile's first token at the block's first pair, ldx floats between
// tokens; w: the first of the Q vectors of the block's first pair block.
template <int R, int Q>
void tile(const float* x, int64_t ldx, const std::byte* w, int64_t pairs, float* y, int64_t ldy, int64_t rows,
          bool accumulate) {
  __m256i mask[Q];
  for (int q = 0; q < Q; ++q) mask[q] = first_lanes(rows - 8 * q);
  const bool whole = rows >= 8 * Q;
  __m256 acc[R][Q];
  for (int r = 0; r < R; ++r)
    for (int q = 0; q < Q; ++q)
      acc[r][q] = !accumulate ? _mm256_setzero_ps()
                  : whole     ? _mm256_loadu_ps(y + r * ldy + 8 * q)
                              : _mm256_maskload_ps(y + r * ldy + 8 * q, mask[q]);
  const __m256i high_half = _mm256_set1_epi32(static_cast<int>(0xffff0000u));
  for (int64_t j = 0; j < pairs; ++j) {
    const std::byte* block = w + j * kBf16PairBytes;
    __m256 even[Q], odd[Q];
    for (int q = 0; q < Q; ++q) {
      const __m256i pair = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 32 * q));
      even[q] = _mm256_castsi256_ps(_mm256_slli_epi32(pair, 16));
      odd[q] = _mm256_castsi256_ps(_mm256_and_si256(pair, high_half));
    }
    for (int r = 0; r < R; ++r) {
      const __m256 x_even = _mm256_broadcast_ss(x + r * ldx + 2 * j);
      const __m256 x_odd = _mm256_broadcast_ss(x + r * ldx + 2 * j + 1);
      for (int q = 0; q < Q; ++q) {
        acc[r][q] = _mm256_fmadd_ps(x_even, even[q], acc[r][q]);
        acc[r][q] = _mm256_fmadd_ps(x_odd, odd[q], acc[r][q]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int q = 0; q < Q; ++q) {
      if (whole) _mm256_storeu_ps(y + r * ldy + 8 * q, acc[r][q]);
      else _mm256_maskstore_ps(y + r * ldy + 8 * q, mask[q], acc[r][q]);
    }
}

using Tile = void (*)(const float*, int64_t, const std::byte*, int64_t, float*, int64_t, int64_t, bool);

// Decode and verify (m <= kStreamTokens): each panel streams once over the whole k. The first 4 tokens
// take the 4-token × 16-row tile on chunks of kChunkPairs pairs (4 KiB), both halves of a chunk in
// turn, so the stream stays sequential and the second half comes from L1; the others (or fewer
// tokens) tiles of up to 3 tokens × 32 rows. Measured on Zen 3, 2 threads, a 128 MiB weight: m = 4 in
// 6.0–6.3 ms with chunks of 16 or 32 pairs, 6.5–6.8 with 64, 6.9 in whole-k halves, 6.4–6.5 as 3 + 1
// whole panels; m = 3 as one 3 × 32 tile in 5.1–5.4 ms where 16-row halves took 7.3–8.0.
constexpr int64_t kStreamTokens = 6;
constexpr int64_t kChunkPairs = 32;
constexpr Tile kPanelTiles[3] = {tile<1, 4>, tile<2, 4>, tile<3, 4>};

void stream_panel(const float* x, int64_t ldx, int64_t m, const std::byte* panel, int64_t pairs, float* y, int64_t ldy,
                  int64_t rows) {
  if (m >= 4) {
    for (int64_t j0 = 0; j0 < pairs; j0 += kChunkPairs)
      for (int64_t half = 0; half < 2 && rows > 16 * half; ++half)
        tile<4, 2>(x + 2 * j0, ldx, panel + j0 * kBf16PairBytes + 64 * half, std::min(kChunkPairs, pairs - j0),
                   y + 16 * half, ldy, rows - 16 * half, j0 > 0);
    x += 4 * ldx, y += 4 * ldy, m -= 4;
  }
  for (int64_t r = 0; r < m; r += 3)
    kPanelTiles[std::min<int64_t>(3, m - r) - 1](x + r * ldx, ldx, panel, pairs, y + r * ldy, ldy, rows, false);
}

// Prefill: tiles of up to 4 tokens × 16 rows (8 accumulators; 4 × 32 spills), each half of a panel in
// turn, the weights from L2. A tile spends kPairBlock pairs between loading and storing its
// accumulators, and a panel's slice of kPairBlock pairs (128 KiB) serves every tile of a token block
// (kTileBlock tiles, 256 tokens) before the next slice, so weights come from memory once per block.
// Measured on Zen 3, 2 threads, m = 512, 16384 × 2048: 126–132 GFLOP/s (61–64% of the 205 GFLOP/s FMA
// peak) where 3 × 32 tiles ran 89–92; pair blocks of 256 or 512 and token blocks of 16 or 32 tiles
// were 2–17% slower, 128 or 256 tiles the same.
constexpr int64_t kTile = 4;
constexpr Tile kHalfTiles[kTile] = {tile<1, 2>, tile<2, 2>, tile<3, 2>, tile<4, 2>};
constexpr int64_t kPairBlock = 1024;
constexpr int64_t kTileBlock = 64;

}  // namespace

void pack_f32_pair_rows(const float* x, int64_t k, bool round_bf16, int64_t r_begin, int64_t r_end, float* out) {
  const int64_t row_floats = bf16_f32_pair_row_floats(k);
  for (int64_t r = r_begin; r < r_end; ++r) {
    const float* in = x + r * k;
    float* row = out + r * row_floats;
    for (int64_t i = 0; i < k; ++i) row[i] = round_bf16 ? bf16_to_float(float_to_bf16(in[i])) : in[i];
    std::fill(row + k, row + row_floats, 0.0f);
  }
}

void matmul_bf16_panels_avx2(const float* x, int64_t m, const TensorView& w, int64_t panel_begin, int64_t panel_end,
                             float* y) {
  DS_CHECK(w.dtype == DType::BF16 && w.format == WeightFormatId::bf16_panels, "bf16 panel kernel on ", w.name);
  const int64_t n = w.shape[0], k = w.shape[1], pairs = bf16_pairs(k), panel_bytes = bf16_panel_bytes(k);
  const int64_t ldx = bf16_f32_pair_row_floats(k);
  auto panel_rows = [&](int64_t p) { return std::min(kBf16PanelRows, n - p * kBf16PanelRows); };
  if (m <= kStreamTokens) {
    for (int64_t p = panel_begin; p < panel_end; ++p)
      stream_panel(x, ldx, m, w.data + p * panel_bytes, pairs, y + p * kBf16PanelRows, n, panel_rows(p));
    return;
  }
  const int64_t tiles = (m + kTile - 1) / kTile;
  for (int64_t t0 = 0; t0 < tiles; t0 += kTileBlock) {
    const int64_t t_end = std::min(tiles, t0 + kTileBlock);
    for (int64_t j0 = 0; j0 < pairs; j0 += kPairBlock) {
      const int64_t block_pairs = std::min(kPairBlock, pairs - j0);
      for (int64_t p = panel_begin; p < panel_end; ++p) {
        const int64_t rows = panel_rows(p);
        for (int64_t half = 0; half < 2 && rows > 16 * half; ++half) {
          const std::byte* block = w.data + p * panel_bytes + j0 * kBf16PairBytes + 64 * half;
          for (int64_t t = t0; t < t_end; ++t) {
            const int64_t first = t * kTile, tokens = std::min(kTile, m - first);
            kHalfTiles[tokens - 1](x + first * ldx + 2 * j0, ldx, block, block_pairs,
                                   y + first * n + p * kBf16PanelRows + 16 * half, n, rows - 16 * half, j0 > 0);
          }
        }
      }
    }
  }
}

}  // namespace ds::kernels
