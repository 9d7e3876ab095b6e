// AVX-512 BF16 matmul on weights in the bf16 panel layout (bf16_panels.h), compiled with
// -mavx512f/bw/vl/bf16 and called only after detect_isa.
//
// Outer-product form: a 64-byte vector of a panel holds 16 output rows × one input pair; `vdpbf16ps`
// with the token's pair broadcast adds both products into 16 outputs at once, so every lane is one
// output and there are no horizontal sums. A tile is up to kBf16TileTokens (12) tokens × one panel
// (32 rows): 24 accumulators, 2 weight loads and 12 broadcasts per 24 `vdpbf16ps`.
//
// Every output is one accumulator that starts at 0 and takes the input pairs in order, whatever the
// tile, the batch, the thread split or the blocking: a block of pairs ends by storing the
// accumulators to y and the next one starts by loading them back, which changes no bit. So a row's
// result never depends on the batch (tested).
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/cpu_tuning.h"
#include "kernels/cpu/stream_prefetch.h"
#include "kernels/formats/bf16_panels/bf16_panels.h"
#include "kernels/formats/bf16_panels/bf16_panels_kernels.h"
#include "util/check.h"

namespace ds::kernels {
namespace {

constexpr int64_t kTile = kBf16TileTokens;

// y[r, 0 .. 32) (+)= Σ_j x[j·R + r] · panel pair j, for tokens r < R; lanes past `mask` untouched.
// x: the tile's packed pairs from the block's first pair; w: the panel from the same pair.
// Decode streams each panel once from memory, one sequential stream per thread. Whether software
// prefetches help depends on the CPU (cpu_tuning.h): on Zen 4 the hardware prefetcher follows the
// stream alone (1–8 KiB ahead was no faster on 2 threads, 4% slower on 1), on the Xeons measured it
// does not. `prefetch`: how the panel stream is prefetched (bytes 0: not).
template <int R>
void tile(const uint32_t* x, const std::byte* w, int64_t pairs, float* y, int64_t ldy, __mmask16 mask0,
          __mmask16 mask1, bool accumulate, StreamPrefetch prefetch) {
  __m512 acc[R][2];
  for (int r = 0; r < R; ++r) {
    acc[r][0] = accumulate ? _mm512_maskz_loadu_ps(mask0, y + r * ldy) : _mm512_setzero_ps();
    acc[r][1] = accumulate ? _mm512_maskz_loadu_ps(mask1, y + r * ldy + 16) : _mm512_setzero_ps();
  }
  for (int64_t j = 0; j < pairs; ++j) {
    if (prefetch.bytes > 0) {
      prefetch_line<_MM_HINT_T0>(w + j * kBf16PairBytes + prefetch.bytes, prefetch.requests);
      prefetch_line<_MM_HINT_T0>(w + j * kBf16PairBytes + prefetch.bytes + 64, prefetch.requests);
    }
    const auto w0 = (__m512bh)_mm512_loadu_si512(w + j * kBf16PairBytes);
    const auto w1 = (__m512bh)_mm512_loadu_si512(w + j * kBf16PairBytes + 64);
    for (int r = 0; r < R; ++r) {
      const auto xb = (__m512bh)_mm512_set1_epi32(static_cast<int>(x[j * R + r]));
      acc[r][0] = _mm512_dpbf16_ps(acc[r][0], xb, w0);
      acc[r][1] = _mm512_dpbf16_ps(acc[r][1], xb, w1);
    }
  }
  for (int r = 0; r < R; ++r) {
    _mm512_mask_storeu_ps(y + r * ldy, mask0, acc[r][0]);
    _mm512_mask_storeu_ps(y + r * ldy + 16, mask1, acc[r][1]);
  }
}

using Tile = void (*)(const uint32_t*, const std::byte*, int64_t, float*, int64_t, __mmask16, __mmask16, bool,
                      StreamPrefetch);
constexpr Tile kTiles[kTile] = {tile<1>, tile<2>, tile<3>, tile<4>,  tile<5>,  tile<6>,
                                tile<7>, tile<8>, tile<9>, tile<10>, tile<11>, tile<12>};
static_assert(kTile == 12);

// Blocking for many tokens: a tile spends kPairBlock pairs (a 128 KiB slice of its panel, from L2)
// between loading and storing its accumulators, and a panel slice serves every tile of a token
// block (up to kTileBlock tiles, 768 tokens) before the next, so weights come from memory once per
// block. The activations (48 KiB per tile and pair block) stream from L2 / L3 at ~7 bytes per
// cycle, which costs nothing. Measured on one core, m = 512, 6144 × 2048 and 2048 × 6144 weights:
// pair blocks of 128 → 1024 took the kernel from 177 to 220 GFLOP/s (the register-resident loop
// reaches 235); 16 vs 64 tiles per block: within 3%.
constexpr int64_t kPairBlock = 1024;
constexpr int64_t kTileBlock = 64;

}  // namespace

void pack_bf16_activations_avx512(const float* x, int64_t m, int64_t k, int64_t r_begin, int64_t r_end,
                                  uint32_t* out) {
  const int64_t pairs = bf16_pairs(k);
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (int64_t r = r_begin; r < r_end; ++r) {
    const float* row = x + r * k;
    const int64_t stride = std::min(kTile, m - r / kTile * kTile);  // the tile's token count
    const __m512i lanes = _mm512_mullo_epi32(iota, _mm512_set1_epi32(static_cast<int>(stride)));
    uint32_t* base = out + r / kTile * pairs * kTile + r % kTile;
    for (int64_t j0 = 0; j0 < pairs; j0 += 16) {  // 32 inputs → 16 pairs, rounded to nearest even
      const int64_t first = 2 * j0, count = std::min<int64_t>(32, k - first);
      const auto in0 = static_cast<__mmask16>(count >= 16 ? 0xffff : (1u << count) - 1);
      const auto in1 = static_cast<__mmask16>(count >= 32 ? 0xffff : count <= 16 ? 0 : (1u << (count - 16)) - 1);
      const __m512bh packed = _mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(in1, row + first + 16),
                                                  _mm512_maskz_loadu_ps(in0, row + first));
      const int64_t out_pairs = std::min<int64_t>(16, pairs - j0);
      const auto mask = static_cast<__mmask16>(out_pairs >= 16 ? 0xffff : (1u << out_pairs) - 1);
      if (stride == 1) _mm512_mask_storeu_epi32(base + j0, mask, (__m512i)packed);
      else _mm512_mask_i32scatter_epi32(base + j0 * stride, mask, lanes, (__m512i)packed, 4);
    }
  }
}

void matmul_bf16_panels_avx512(const uint32_t* xp, int64_t m, const TensorView& w, int64_t panel_begin,
                               int64_t panel_end, float* y) {
  DS_CHECK(w.dtype == DType::BF16 && w.format == WeightFormatId::bf16_panels, "bf16 panel kernel on ", w.name);
  const int64_t n = w.shape[0], k = w.shape[1], pairs = bf16_pairs(k), panel_bytes = bf16_panel_bytes(k);
  const int64_t tiles = (m + kTile - 1) / kTile, tile_words = pairs * kTile;
  auto masks = [&](int64_t p) {
    const int64_t rows = std::min(kBf16PanelRows, n - p * kBf16PanelRows);
    return std::pair{static_cast<__mmask16>(rows >= 16 ? 0xffff : (1u << rows) - 1),
                     static_cast<__mmask16>(rows >= 32 ? 0xffff : rows <= 16 ? 0 : (1u << (rows - 16)) - 1)};
  };
  if (tiles == 1) {  // decode and small batches: each panel streams once over the whole k, in order
    const StreamPrefetch prefetch = cpu_tuning().decode_prefetch;
    for (int64_t p = panel_begin; p < panel_end; ++p) {
      const auto [mask0, mask1] = masks(p);
      kTiles[m - 1](xp, w.data + p * panel_bytes, pairs, y + p * kBf16PanelRows, n, mask0, mask1, false, prefetch);
    }
    return;
  }
  for (int64_t t0 = 0; t0 < tiles; t0 += kTileBlock) {
    const int64_t t_end = std::min(tiles, t0 + kTileBlock);
    for (int64_t j0 = 0; j0 < pairs; j0 += kPairBlock) {
      const int64_t block_pairs = std::min(kPairBlock, pairs - j0);
      for (int64_t p = panel_begin; p < panel_end; ++p) {
        const auto [mask0, mask1] = masks(p);
        const std::byte* panel = w.data + p * panel_bytes + j0 * kBf16PairBytes;
        for (int64_t t = t0; t < t_end; ++t) {
          const int64_t rows = std::min(kTile, m - t * kTile);
          kTiles[rows - 1](xp + t * tile_words + j0 * rows, panel, block_pairs, y + t * kTile * n + p * kBf16PanelRows,
                           n, mask0, mask1, j0 > 0, StreamPrefetch{});
        }
      }
    }
  }
}

}  // namespace ds::kernels
