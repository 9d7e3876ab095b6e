// AVX-512 VNNI int8 × int8 matmul (compiled with -mavx512f/bw/vl/vnni; called only after
// has_avx512_vnni): activations quantised per row and group (int8_activations.h) times weights in
// the panel layout (int8_panels.h).
//
// Outer-product form: one zmm holds 16 output rows × 4 inputs of a quad, `vpdpbusd` with the 4
// activation bytes of a token broadcast adds 4 products per lane, so every lane is one output and
// there are no horizontal sums. Per group: 8 `vpdpbusd` per 16 outputs into an int32 accumulator that
// starts at −128 · Σ q_x (undoing the +128 of the stored weights), then one fp32
// fma(float(dot), scale_w · scale_x, acc). That per-output sequence is the same for every tile
// shape, batch size and thread split, and the reference's (bit-identical, tested). Weights that ask
// for 16-bit activations run it on two byte planes (hi, lo) and combine 256 · hi + lo in int32.
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/cpu_tuning.h"
#include "kernels/cpu/stream_prefetch.h"
#include "kernels/formats/int8_panels/int8_kernels.h"
#include "kernels/formats/int8_panels/int8_panels.h"
#include "util/check.h"

namespace ds::kernels {
namespace {

// Up to kTileRows tokens × one 32-row panel: 2·R·P int32 + 2·R fp32 accumulators, 2 weight vectors
// and the broadcasts stay in the 32 zmm registers (P = activation planes: R ≤ 6 for 1, ≤ 3 for 2).
constexpr int kTileRows = 6;
// A 4-token call (a verify of 3 drafts) with 16-bit activations takes the planes in turn instead
// (PlanesInTurn): one int32 accumulator per output, so the 4 tokens share one pass over each panel
// where side by side needs tiles of 3 + 1, two passes (a 4-row verify's 16-bit matmuls cost
// 1.51–1.56× a decode step's that way, docs/benchmarks.md). Elsewhere side by side is faster: in
// turn, 1-token calls took 7–14% longer, and prefill 15% (tiles of 4–6 tokens; 6 spill).
constexpr int kInTurnRows = 4;
// Up to this many tokens a call streams its panels from memory (matmul_int8_avx512).
constexpr int64_t kStreamTokens = 16;

// The exact int32 sums of group g for R tokens, both 16-row halves c: dot[r][c] = Σ q_w · q_x, or
// with two planes 256 · Σ q_w · hi + Σ q_w · lo (each plane's sum starting at its −128 · Σ q).
// Planes side by side: one pass over the group's quads, P accumulators per output.
template <int R, int P>
struct PlanesSideBySide {
  static void dots(const Int8Activations& a, int64_t r0, int64_t g, const std::byte* block, __m512i (&dot)[R][2]) {
    const int64_t groups = a.groups, plane_stride = groups * kInt8ScaleGroup, x_stride = P * plane_stride;
    __m512i part[R][P][2];
    for (int r = 0; r < R; ++r)
      for (int p = 0; p < P; ++p)
        part[r][p][0] = part[r][p][1] = _mm512_set1_epi32(a.offset_sum[((r0 + r) * P + p) * groups + g]);
    const int8_t* xg = a.q + r0 * x_stride + g * kInt8ScaleGroup;
    for (int j = 0; j < 8; ++j) {
      const __m512i w0 = _mm512_load_si512(block + j * kInt8QuadBytes);
      const __m512i w1 = _mm512_load_si512(block + j * kInt8QuadBytes + 64);
      for (int r = 0; r < R; ++r)
        for (int p = 0; p < P; ++p) {
          int32_t quad;
          __builtin_memcpy(&quad, xg + r * x_stride + p * plane_stride + 4 * j, 4);
          const __m512i xb = _mm512_set1_epi32(quad);
          part[r][p][0] = _mm512_dpbusd_epi32(part[r][p][0], w0, xb);
          part[r][p][1] = _mm512_dpbusd_epi32(part[r][p][1], w1, xb);
        }
    }
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < 2; ++c)  // 256 · dot(hi) + dot(lo): exact in int32
        dot[r][c] = P == 2 ? _mm512_add_epi32(_mm512_slli_epi32(part[r][0][c], 8), part[r][1][c]) : part[r][0][c];
  }
};

// Two planes in turn: hi's sum, shifted left by 8, starts lo's (the same int32 result); the group's
// quads are read twice, the second time from L1.
template <int R>
struct PlanesInTurn {
  static void dots(const Int8Activations& a, int64_t r0, int64_t g, const std::byte* block, __m512i (&dot)[R][2]) {
    const int64_t groups = a.groups, plane_stride = groups * kInt8ScaleGroup, x_stride = 2 * plane_stride;
#pragma GCC unroll 2  // dot[][] stays in registers only with both planes unrolled
    for (int p = 0; p < 2; ++p) {
      for (int r = 0; r < R; ++r) {
        const __m512i start = _mm512_set1_epi32(a.offset_sum[((r0 + r) * 2 + p) * groups + g]);
        for (int c = 0; c < 2; ++c)
          dot[r][c] = p == 0 ? start : _mm512_add_epi32(_mm512_slli_epi32(dot[r][c], 8), start);
      }
      const int8_t* xg = a.q + r0 * x_stride + p * plane_stride + g * kInt8ScaleGroup;
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) {
        const __m512i w0 = _mm512_load_si512(block + j * kInt8QuadBytes);
        const __m512i w1 = _mm512_load_si512(block + j * kInt8QuadBytes + 64);
        for (int r = 0; r < R; ++r) {
          int32_t quad;
          __builtin_memcpy(&quad, xg + r * x_stride + 4 * j, 4);
          const __m512i xb = _mm512_set1_epi32(quad);
          dot[r][0] = _mm512_dpbusd_epi32(dot[r][0], w0, xb);
          dot[r][1] = _mm512_dpbusd_epi32(dot[r][1], w1, xb);
        }
      }
    }
  }
};

// y[r, panel rows] for tokens r0 .. r0 + R − 1 (rows `ldy` floats apart); `rows` valid outputs (≤ 32).
// `prefetch`: how each group's bytes ahead are prefetched (decode on CPUs that want it, cpu_tuning.h).
template <int R, class Dots>
void tile(const Int8Activations& a, int64_t r0, const std::byte* panel, float* y, int64_t ldy, int64_t rows,
          StreamPrefetch prefetch) {
  const int64_t groups = a.groups;
  __m512 acc[R][2];
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t g = 0; g < groups; ++g) {
    const std::byte* block = panel + g * kInt8GroupBytes;
    if (prefetch.bytes > 0)
      for (int64_t line = 0; line < kInt8GroupBytes; line += 64)
        prefetch_line<_MM_HINT_T0>(block + prefetch.bytes + line, prefetch.requests);
    __m512i dot[R][2];
    Dots::dots(a, r0, g, block, dot);
    const __m512 sw0 = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(block + kInt8ScalesOffset)));
    const __m512 sw1 = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(block + kInt8ScalesOffset + 32)));
    for (int r = 0; r < R; ++r) {
      const __m512 sx = _mm512_set1_ps(a.scales[(r0 + r) * groups + g]);
      acc[r][0] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[r][0]), _mm512_mul_ps(sw0, sx), acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[r][1]), _mm512_mul_ps(sw1, sx), acc[r][1]);
    }
  }
  const auto mask0 = static_cast<__mmask16>(rows >= 16 ? 0xffff : (1u << rows) - 1);
  const auto mask1 = static_cast<__mmask16>(rows >= 32 ? 0xffff : rows <= 16 ? 0 : (1u << (rows - 16)) - 1);
  for (int r = 0; r < R; ++r) {
    _mm512_mask_storeu_ps(y + r * ldy, mask0, acc[r][0]);
    _mm512_mask_storeu_ps(y + r * ldy + 16, mask1, acc[r][1]);
  }
}

using Tile = void (*)(const Int8Activations&, int64_t, const std::byte*, float*, int64_t, int64_t, StreamPrefetch);
constexpr Tile kTiles[kTileRows] = {tile<1, PlanesSideBySide<1, 1>>, tile<2, PlanesSideBySide<2, 1>>,
                                    tile<3, PlanesSideBySide<3, 1>>, tile<4, PlanesSideBySide<4, 1>>,
                                    tile<5, PlanesSideBySide<5, 1>>, tile<6, PlanesSideBySide<6, 1>>};
constexpr Tile kTiles16[kTileRows / 2] = {tile<1, PlanesSideBySide<1, 2>>, tile<2, PlanesSideBySide<2, 2>>,
                                          tile<3, PlanesSideBySide<3, 2>>};
constexpr Tile kInTurnTile16 = tile<kInTurnRows, PlanesInTurn<kInTurnRows>>;

}  // namespace

void quantize_activations_avx512(const float* x, int64_t k, int64_t r_begin, int64_t r_end, const Int8Activations& a) {
  const int64_t plane_stride = a.groups * kInt8ScaleGroup;
  const float levels = a.planes == 2 ? kInt16Levels : kInt8Levels;
  for (int64_t r = r_begin; r < r_end; ++r) {
    const float* row = x + r * k;
    for (int64_t g = 0; g < a.groups; ++g) {
      const int64_t first = g * kInt8ScaleGroup, count = std::min<int64_t>(kInt8ScaleGroup, k - first);
      const auto mask0 = static_cast<__mmask16>(count >= 16 ? 0xffff : (1u << count) - 1);
      const auto mask1 = static_cast<__mmask16>(count >= 32 ? 0xffff : count <= 16 ? 0 : (1u << (count - 16)) - 1);
      const __m512 v0 = _mm512_maskz_loadu_ps(mask0, row + first);
      const __m512 v1 = _mm512_maskz_loadu_ps(mask1, row + first + 16);
      const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
      const float inverse = amax > 0.0f ? levels / amax : 0.0f;
      // Round to nearest even (the default MXCSR mode), as std::nearbyint in the reference.
      __m512i q0 = _mm512_cvtps_epi32(_mm512_mul_ps(v0, _mm512_set1_ps(inverse)));
      __m512i q1 = _mm512_cvtps_epi32(_mm512_mul_ps(v1, _mm512_set1_ps(inverse)));
      int8_t* out = a.q + r * a.planes * plane_stride + first;
      int32_t* offsets = a.offset_sum + r * a.planes * a.groups + g;
      if (a.planes == 2) {  // lo = q16 − 256 · hi, hi = (q16 + 128) >> 8
        const __m512i half = _mm512_set1_epi32(128);
        const __m512i hi0 = _mm512_srai_epi32(_mm512_add_epi32(q0, half), 8);
        const __m512i hi1 = _mm512_srai_epi32(_mm512_add_epi32(q1, half), 8);
        const __m512i lo0 = _mm512_sub_epi32(q0, _mm512_slli_epi32(hi0, 8));
        const __m512i lo1 = _mm512_sub_epi32(q1, _mm512_slli_epi32(hi1, 8));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + plane_stride), _mm512_cvtepi32_epi8(lo0));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + plane_stride + 16), _mm512_cvtepi32_epi8(lo1));
        offsets[a.groups] = -128 * _mm512_reduce_add_epi32(_mm512_add_epi32(lo0, lo1));
        q0 = hi0;
        q1 = hi1;
      }
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_cvtepi32_epi8(q0));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16), _mm512_cvtepi32_epi8(q1));
      offsets[0] = -128 * _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
      a.scales[r * a.groups + g] = amax / levels;
    }
  }
}

void matmul_int8_avx512(const Int8Activations& a, int64_t m, const TensorView& w, int64_t panel_begin,
                        int64_t panel_end, float* y) {
  DS_CHECK(w.format == WeightFormatId::int8_panels, "int8 kernel on ", w.name);
  DS_CHECK(a.planes == w.activation_planes, "activations with ", a.planes, " planes for ", w.name);
  const int64_t n = w.shape[0], k = w.shape[1], panel_bytes = int8_panel_bytes(k);
  // The planes in turn only where they save a pass over the panels: side by side is faster per pass.
  const bool in_turn = a.planes == 2 && m == kInTurnRows;
  const int64_t tile_rows = a.planes == 2 ? kTileRows / 2 : kTileRows;
  const Tile* tiles = a.planes == 2 ? kTiles16 : kTiles;
  // Calls of up to kStreamTokens tokens (decode, batches of decodes and verifies) are bound by the
  // panels' stream: a block's first token tile over a panel reads it from memory, prefetched; the
  // other tiles, and every tile of prefill, read it from cache unprefetched. Both made once, not per
  // call: a struct built at each call is passed written in parts and read whole (store forwarding).
  const StreamPrefetch prefetch = m <= kStreamTokens ? cpu_tuning().decode_prefetch : StreamPrefetch{}, none{};
  // Tokens in blocks whose int8 activations (~k bytes each) stay in L2 beside one panel while the
  // thread's panels stream past: each weight byte is read from memory once per block.
  const int64_t block = std::max<int64_t>(kTileRows, (256 * 1024 / std::max<int64_t>(k, 1)) / kTileRows * kTileRows);
  static_assert(kTileRows % 2 == 0 && kInTurnRows <= kTileRows);
  for (int64_t b0 = 0; b0 < m; b0 += block) {
    const int64_t b_end = std::min(m, b0 + block);
    for (int64_t p = panel_begin; p < panel_end; ++p) {
      const std::byte* panel = w.data + p * panel_bytes;
      const int64_t first_col = p * kInt8PanelRows, rows = std::min(kInt8PanelRows, n - first_col);
      if (in_turn) {  // m = kInTurnRows ≤ block: one tile of every token
        kInTurnTile16(a, 0, panel, y + first_col, n, rows, prefetch);
        continue;
      }
      for (int64_t r = b0; r < b_end; r += tile_rows) {
        const int64_t count = std::min<int64_t>(tile_rows, b_end - r);
        tiles[count - 1](a, r, panel, y + r * n + first_col, n, rows, r == b0 ? prefetch : none);
      }
    }
  }
}

}  // namespace ds::kernels
