// AVX-512 BF16 + VBMI matmul on FP8 panels (fp8_panels.h), compiled with -mavx512f/bw/vl/bf16/vbmi and
// called only after the format checked the CPU.
//
// Widening: a 64-byte vector of codes (32 rows × one input pair) becomes the two bf16 vectors of a
// bf16 panel pair in five instructions: two `vpermi2b` look up the low and the high byte of each
// code's magnitude as bf16 (128-entry tables: e4m3 → bf16 is exact, subnormals included), a
// `vpternlogd` puts the code's sign into the high byte, and `vpunpcklbw` / `vpunpckhbw` interleave
// the bytes into words, lane by lane — the packed order makes those words the bf16 panel's.
// Then `vdpbf16ps` with a token's pair broadcast adds both products into 16 outputs' lanes, as the
// bf16 panel kernel does, into a block partial that starts at zero for each 128 inputs; the block's
// scale is applied with one fma per 16 outputs. Every output takes its pairs in order from zero and
// its blocks in order, whatever the tile, the batch, the thread split or the path below, so a row's
// result never depends on the batch (tested), and equals fp8_format.h's arithmetic bit for bit.
//
// Two paths. Decode and small batches (m ≤ kFusedTokens): one pass per panel widening each pair in
// registers, 1 byte per weight read once. Larger batches: a slice of a panel is widened once into a
// bf16 scratch that every token tile of the batch then reads, so widening costs 1 / tokens per product.
#include <immintrin.h>

#include <algorithm>
#include <array>

#include "kernels/cpu/cpu_tuning.h"
#include "kernels/cpu/stream_prefetch.h"
#include "kernels/formats/bf16_panels/bf16_panels_kernels.h"
#include "kernels/formats/fp8/e4m3.h"
#include "kernels/formats/fp8/fp8_kernels.h"
#include "kernels/formats/fp8/fp8_panels.h"
#include "util/check.h"
#include "util/float16.h"

namespace ds::kernels {
namespace {

constexpr int64_t kTile = kBf16TileTokens;  // tokens per activation tile (12)
constexpr int64_t kFusedTokens = 4;         // up to here the panel is widened in registers
// Blocking of the batched path, the bf16 panel kernel's: a slice of kSlicePairs pairs of a panel is
// widened into a 128 KiB bf16 scratch (L2) that every tile of a token block (up to kTileBlock tiles,
// 768 tokens) reads in turn, each tile streaming its activations for the slice in one sequential run.
// (Widening one 64-pair scale block at a time into L1 instead cut the tiles' activation streams into
// 3 KiB runs 48 KiB apart: 2B down_proj shapes ran at half the bf16 kernel's speed.)
constexpr int64_t kSlicePairs = 1024;
constexpr int64_t kTileBlock = 64;
static_assert(kSlicePairs % kFp8BlockPairs == 0, "slices hold whole scale blocks");

// The lookup tables: low and high byte of bf16(|e4m3 code|) for the 128 magnitudes, as the two
// 64-byte halves `vpermi2b` selects between by bit 6 of the index.
struct Widen {
  __m512i lo_a, lo_b, hi_a, hi_b, sign;
};

Widen make_widen() {
  alignas(64) std::array<uint8_t, 128> lo{}, hi{};
  for (int code = 0; code < 128; ++code) {
    const uint16_t bits = float_to_bf16(e4m3_to_float(static_cast<uint8_t>(code)));  // exact (NaN: quiet NaN)
    lo[static_cast<size_t>(code)] = static_cast<uint8_t>(bits & 0xff);
    hi[static_cast<size_t>(code)] = static_cast<uint8_t>(bits >> 8);
  }
  return Widen{_mm512_load_si512(lo.data()), _mm512_load_si512(lo.data() + 64), _mm512_load_si512(hi.data()),
               _mm512_load_si512(hi.data() + 64), _mm512_set1_epi8(static_cast<char>(0x80))};
}

// The bf16 pair vectors of rows 0–15 (w0) and 16–31 (w1) of one packed pair.
inline void widen(const Widen& t, const std::byte* codes, __m512bh& w0, __m512bh& w1) {
  const __m512i v = _mm512_loadu_si512(codes);
  const __m512i lo = _mm512_permutex2var_epi8(t.lo_a, v, t.lo_b);
  const __m512i hi = _mm512_ternarylogic_epi32(_mm512_permutex2var_epi8(t.hi_a, v, t.hi_b), v, t.sign, 0xf8);  // hi | (v & sign)
  w0 = (__m512bh)_mm512_unpacklo_epi8(lo, hi);
  w1 = (__m512bh)_mm512_unpackhi_epi8(lo, hi);
}

struct PanelMasks {
  __mmask16 m0, m1;
};
inline PanelMasks panel_masks(int64_t n, int64_t p) {
  const int64_t rows = std::min(kFp8PanelRows, n - p * kFp8PanelRows);
  return {static_cast<__mmask16>(rows >= 16 ? 0xffff : (1u << rows) - 1),
          static_cast<__mmask16>(rows >= 32 ? 0xffff : rows <= 16 ? 0 : (1u << (rows - 16)) - 1)};
}

// Decode: y[r, 0 .. 32) = the panel's outputs for tokens r < R, the whole k in one pass. x: the
// tile's packed pairs ([pairs][R] words); prefetch: how the code stream is prefetched (cpu_tuning.h).
template <int R>
void fused_tile(const Widen& t, const uint32_t* x, const std::byte* panel, int64_t k, float* y, int64_t ldy,
                PanelMasks masks, StreamPrefetch prefetch) {
  const auto* scales = reinterpret_cast<const float*>(panel);
  const std::byte* codes = panel + fp8_header_bytes(k);
  const int64_t pairs = fp8_pairs(k);
  __m512 acc[R][2];
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t j0 = 0, b = 0; j0 < pairs; j0 += kFp8BlockPairs, ++b) {
    __m512 part[R][2];
    for (int r = 0; r < R; ++r) part[r][0] = part[r][1] = _mm512_setzero_ps();
    for (int64_t j = j0; j < std::min(pairs, j0 + kFp8BlockPairs); ++j) {
      if (prefetch.bytes > 0) prefetch_line<_MM_HINT_T0>(codes + j * kFp8PairBytes + prefetch.bytes, prefetch.requests);
      __m512bh w0, w1;
      widen(t, codes + j * kFp8PairBytes, w0, w1);
      for (int r = 0; r < R; ++r) {
        const auto xb = (__m512bh)_mm512_set1_epi32(static_cast<int>(x[j * R + r]));
        part[r][0] = _mm512_dpbf16_ps(part[r][0], xb, w0);
        part[r][1] = _mm512_dpbf16_ps(part[r][1], xb, w1);
      }
    }
    const __m512 scale = _mm512_set1_ps(scales[b]);
    for (int r = 0; r < R; ++r) {
      acc[r][0] = _mm512_fmadd_ps(scale, part[r][0], acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(scale, part[r][1], acc[r][1]);
    }
  }
  for (int r = 0; r < R; ++r) {
    _mm512_mask_storeu_ps(y + r * ldy, masks.m0, acc[r][0]);
    _mm512_mask_storeu_ps(y + r * ldy + 16, masks.m1, acc[r][1]);
  }
}

// Batches: y[r, 0 .. 32) = (first ? 0 : y) + scale · Σ over the block's pairs, for tokens r < R, from the
// block widened into `wide` ([pairs][64] bf16: rows 0–15 then 16–31 of each pair).
template <int R>
void scratch_tile(const uint32_t* x, const uint16_t* wide, int64_t pairs, float scale, bool first, float* y, int64_t ldy,
                  PanelMasks masks) {
  __m512 part[R][2];
  for (int r = 0; r < R; ++r) part[r][0] = part[r][1] = _mm512_setzero_ps();
  for (int64_t j = 0; j < pairs; ++j) {
    const auto w0 = (__m512bh)_mm512_load_si512(wide + j * 64);
    const auto w1 = (__m512bh)_mm512_load_si512(wide + j * 64 + 32);
    for (int r = 0; r < R; ++r) {
      const auto xb = (__m512bh)_mm512_set1_epi32(static_cast<int>(x[j * R + r]));
      part[r][0] = _mm512_dpbf16_ps(part[r][0], xb, w0);
      part[r][1] = _mm512_dpbf16_ps(part[r][1], xb, w1);
    }
  }
  const __m512 s = _mm512_set1_ps(scale);
  for (int r = 0; r < R; ++r) {
    const __m512 y0 = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(masks.m0, y + r * ldy);
    const __m512 y1 = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(masks.m1, y + r * ldy + 16);
    _mm512_mask_storeu_ps(y + r * ldy, masks.m0, _mm512_fmadd_ps(s, part[r][0], y0));
    _mm512_mask_storeu_ps(y + r * ldy + 16, masks.m1, _mm512_fmadd_ps(s, part[r][1], y1));
  }
}

using FusedTile = void (*)(const Widen&, const uint32_t*, const std::byte*, int64_t, float*, int64_t, PanelMasks,
                           StreamPrefetch);
constexpr FusedTile kFusedTiles[kFusedTokens] = {fused_tile<1>, fused_tile<2>, fused_tile<3>, fused_tile<4>};
using ScratchTile = void (*)(const uint32_t*, const uint16_t*, int64_t, float, bool, float*, int64_t, PanelMasks);
constexpr ScratchTile kScratchTiles[kTile] = {scratch_tile<1>, scratch_tile<2>, scratch_tile<3>,  scratch_tile<4>,
                                              scratch_tile<5>, scratch_tile<6>, scratch_tile<7>,  scratch_tile<8>,
                                              scratch_tile<9>, scratch_tile<10>, scratch_tile<11>, scratch_tile<12>};
static_assert(kTile == 12);

}  // namespace

void matmul_fp8_panels_avx512(const uint32_t* xp, int64_t m, const TensorView& w, int64_t panel_begin,
                              int64_t panel_end, float* y) {
  DS_CHECK(w.format == WeightFormatId::fp8_panels, "FP8 panel kernel on ", w.name);
  static const Widen tables = make_widen();
  const int64_t n = w.shape[0], k = w.shape[1], pairs = fp8_pairs(k), panel_bytes = fp8_panel_bytes(k);
  if (m <= kFusedTokens) {
    const StreamPrefetch prefetch = cpu_tuning().decode_prefetch;
    for (int64_t p = panel_begin; p < panel_end; ++p)
      kFusedTiles[m - 1](tables, xp, w.data + p * panel_bytes, k, y + p * kFp8PanelRows, n, panel_masks(n, p), prefetch);
    return;
  }
  alignas(64) uint16_t wide[kSlicePairs * 64];  // [slice pairs][64 bf16]: a slice of one panel, widened (128 KiB)
  const int64_t tiles = (m + kTile - 1) / kTile, tile_words = pairs * kTile;
  for (int64_t t0 = 0; t0 < tiles; t0 += kTileBlock) {
    const int64_t t_end = std::min(tiles, t0 + kTileBlock);
    for (int64_t p = panel_begin; p < panel_end; ++p) {
      const std::byte* panel = w.data + p * panel_bytes;
      const auto* scales = reinterpret_cast<const float*>(panel);
      const std::byte* codes = panel + fp8_header_bytes(k);
      const PanelMasks masks = panel_masks(n, p);
      for (int64_t s0 = 0; s0 < pairs; s0 += kSlicePairs) {
        const int64_t slice_pairs = std::min(kSlicePairs, pairs - s0);
        for (int64_t j = 0; j < slice_pairs; ++j) {
          __m512bh w0, w1;
          widen(tables, codes + (s0 + j) * kFp8PairBytes, w0, w1);
          _mm512_store_si512(wide + j * 64, (__m512i)w0);
          _mm512_store_si512(wide + j * 64 + 32, (__m512i)w1);
        }
        // Each tile takes the slice's scale blocks in order: one sequential stream of its activations.
        for (int64_t t = t0; t < t_end; ++t) {
          const int64_t rows = std::min(kTile, m - t * kTile);
          const uint32_t* x = xp + t * tile_words;
          float* yt = y + t * kTile * n + p * kFp8PanelRows;
          for (int64_t j0 = s0; j0 < s0 + slice_pairs; j0 += kFp8BlockPairs)
            kScratchTiles[rows - 1](x + j0 * rows, wide + (j0 - s0) * 64, std::min(kFp8BlockPairs, pairs - j0),
                                    scales[j0 / kFp8BlockPairs], j0 == 0, yt, n, masks);
        }
      }
    }
  }
}

}  // namespace ds::kernels
