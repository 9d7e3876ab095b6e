// AVX2 int8 × int8 matmul (compiled with -mavx2 -mfma; the fallback for CPUs without AVX-512 VNNI):
// the same semantics as matmul_int8_avx512.cpp on the same panel layout, with `vpmaddwd` on the
// weights widened to int16 (u8 → int16 is exact, and int16 pair sums cannot saturate, unlike
// `vpmaddubsw`). The integer dot of each group is exact whatever the summation order, and the fp32
// combination fma(float(dot), scale_w · scale_x, acc) runs per output in group order, so results are
// bit-identical to the reference and to the AVX-512 kernel. Decode takes one token through a panel (its
// four 8-row slices together); batches take tiles of kTile tokens through one slice at a time, each
// weight vector widened once per tile.
#include <immintrin.h>

#include <algorithm>

#include "kernels/formats/int8_panels/int8_kernels.h"
#include "kernels/formats/int8_panels/int8_panels.h"
#include "util/check.h"

namespace ds::kernels {
namespace {

// y[panel rows] of one token (`rows` valid outputs, ≤ 32).
void panel_row(const Int8Activations& a, int64_t r, const std::byte* panel, float* y, int64_t rows) {
  const int64_t groups = a.groups, plane_stride = groups * kInt8ScaleGroup;
  const int8_t* x = a.q + r * a.planes * plane_stride;
  // Lanes of a 4-output slice after vpmaddwd hold pair sums [o0, o0, o1, o1 | o2, o2, o3, o3]; two
  // slices through vphaddd give [o0 o1 o4 o5 | o2 o3 o6 o7], put back in order by this permutation.
  const __m256i order = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7);
  __m256 acc[4];
  for (__m256& v : acc) v = _mm256_setzero_ps();
  for (int64_t g = 0; g < groups; ++g) {
    const std::byte* block = panel + g * kInt8GroupBytes;
    __m256i dot[4];  // [slice of 8 outputs]: Σ over planes of dot · 256^(planes − 1 − p)
    for (__m256i& v : dot) v = _mm256_setzero_si256();
    for (int64_t p = 0; p < a.planes; ++p) {
      __m256i pair[8];  // [slice][low / high 4 outputs]
      for (__m256i& v : pair) v = _mm256_setzero_si256();
      for (int j = 0; j < 8; ++j) {
        int32_t quad;
        __builtin_memcpy(&quad, x + p * plane_stride + g * kInt8ScaleGroup + 4 * j, 4);
        const __m256i xq = _mm256_broadcastq_epi64(_mm_cvtepi8_epi16(_mm_cvtsi32_si128(quad)));  // 4 × int16, ×4
        for (int s = 0; s < 4; ++s) {
          const __m256i wv = _mm256_load_si256(reinterpret_cast<const __m256i*>(block + j * kInt8QuadBytes + 32 * s));
          const __m256i lo = _mm256_cvtepu8_epi16(_mm256_castsi256_si128(wv));
          const __m256i hi = _mm256_cvtepu8_epi16(_mm256_extracti128_si256(wv, 1));
          pair[2 * s] = _mm256_add_epi32(pair[2 * s], _mm256_madd_epi16(lo, xq));
          pair[2 * s + 1] = _mm256_add_epi32(pair[2 * s + 1], _mm256_madd_epi16(hi, xq));
        }
      }
      const __m256i offset = _mm256_set1_epi32(a.offset_sum[(r * a.planes + p) * groups + g]);
      for (int s = 0; s < 4; ++s) {
        const __m256i plane = _mm256_add_epi32(
            _mm256_permutevar8x32_epi32(_mm256_hadd_epi32(pair[2 * s], pair[2 * s + 1]), order), offset);
        dot[s] = _mm256_add_epi32(_mm256_slli_epi32(dot[s], 8), plane);  // 256 · hi + lo
      }
    }
    const __m256 sx = _mm256_set1_ps(a.scales[r * groups + g]);
    for (int s = 0; s < 4; ++s) {
      const __m256 sw = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(block + kInt8ScalesOffset + 16 * s)));
      acc[s] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[s]), _mm256_mul_ps(sw, sx), acc[s]);
    }
  }
  if (rows == kInt8PanelRows) {
    for (int s = 0; s < 4; ++s) _mm256_storeu_ps(y + 8 * s, acc[s]);
  } else {
    alignas(32) float out[kInt8PanelRows];
    for (int s = 0; s < 4; ++s) _mm256_store_ps(out + 8 * s, acc[s]);
    std::copy(out, out + rows, y);
  }
}

// y[r0 + t, panel rows] for tokens t < T (prefill, verify): one slice of 8 rows at a time over the whole
// k, so that each weight vector is loaded and widened once for the T tokens, with T accumulators and 2T
// pair sums in registers. Every output's integer dot and fp32 sequence are panel_row's: bit-identical.
template <int T>
void panel_tile(const Int8Activations& a, int64_t r0, const std::byte* panel, float* y, int64_t n, int64_t rows) {
  const int64_t groups = a.groups, plane_stride = groups * kInt8ScaleGroup;
  const __m256i order = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7);  // as in panel_row
  alignas(32) float out[T][kInt8PanelRows];
  for (int s = 0; s < 4; ++s) {
    __m256 acc[T];
    for (int t = 0; t < T; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t g = 0; g < groups; ++g) {
      const std::byte* block = panel + g * kInt8GroupBytes;
      __m256i dot[T];  // Σ over planes of dot · 256^(planes − 1 − p)
      for (int t = 0; t < T; ++t) dot[t] = _mm256_setzero_si256();
      for (int64_t p = 0; p < a.planes; ++p) {
        alignas(32) int16_t x16[T][kInt8ScaleGroup];  // [token][input] the group's activations, widened once
        for (int t = 0; t < T; ++t) {
          const int8_t* x = a.q + ((r0 + t) * a.planes + p) * plane_stride + g * kInt8ScaleGroup;
          for (int half = 0; half < 2; ++half)
            _mm256_store_si256(reinterpret_cast<__m256i*>(x16[t] + 16 * half),
                               _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + 16 * half))));
        }
        __m256i pair_lo[T], pair_hi[T];  // [token] rows 8s .. 8s + 3 and 8s + 4 .. 8s + 7, as panel_row's pairs
        for (int t = 0; t < T; ++t) pair_lo[t] = pair_hi[t] = _mm256_setzero_si256();
        for (int j = 0; j < 8; ++j) {
          const __m256i wv = _mm256_load_si256(reinterpret_cast<const __m256i*>(block + j * kInt8QuadBytes + 32 * s));
          const __m256i lo = _mm256_cvtepu8_epi16(_mm256_castsi256_si128(wv));
          const __m256i hi = _mm256_cvtepu8_epi16(_mm256_extracti128_si256(wv, 1));
          for (int t = 0; t < T; ++t) {
            long long quad;  // inputs 4j .. 4j + 3 as int16, broadcast to the four 64-bit lanes
            __builtin_memcpy(&quad, x16[t] + 4 * j, 8);
            const __m256i xq = _mm256_set1_epi64x(quad);
            pair_lo[t] = _mm256_add_epi32(pair_lo[t], _mm256_madd_epi16(lo, xq));
            pair_hi[t] = _mm256_add_epi32(pair_hi[t], _mm256_madd_epi16(hi, xq));
          }
        }
        for (int t = 0; t < T; ++t) {
          const __m256i offset = _mm256_set1_epi32(a.offset_sum[((r0 + t) * a.planes + p) * groups + g]);
          const __m256i plane = _mm256_add_epi32(
              _mm256_permutevar8x32_epi32(_mm256_hadd_epi32(pair_lo[t], pair_hi[t]), order), offset);
          dot[t] = _mm256_add_epi32(_mm256_slli_epi32(dot[t], 8), plane);  // 256 · hi + lo
        }
      }
      const __m256 sw = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(block + kInt8ScalesOffset + 16 * s)));
      for (int t = 0; t < T; ++t)
        acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[t]), _mm256_mul_ps(sw, _mm256_set1_ps(a.scales[(r0 + t) * groups + g])),
                                 acc[t]);
    }
    for (int t = 0; t < T; ++t) _mm256_store_ps(out[t] + 8 * s, acc[t]);
  }
  for (int t = 0; t < T; ++t) std::copy(out[t], out[t] + rows, y + (r0 + t) * n);
}

// Tokens per tile. Measured on Zen 3 (one thread, a 6144 × 2048 weight; one token at a time before):
// 4 tokens 2.14–2.65 ms (2.71–3.33), 64 tokens 31.9–32.5 (41.1–44.7), 512 tokens 250–266 (319–331);
// tiles of 3 and 2 fell between.
constexpr int64_t kTile = 4;

}  // namespace

void quantize_activations_avx2(const float* x, int64_t k, int64_t r_begin, int64_t r_end, const Int8Activations& a) {
  const int64_t plane_stride = a.groups * kInt8ScaleGroup;
  const float levels = a.planes == 2 ? kInt16Levels : kInt8Levels;
  const __m256 sign = _mm256_set1_ps(-0.0f);
  for (int64_t r = r_begin; r < r_end; ++r) {
    const float* row = x + r * k;
    for (int64_t g = 0; g < a.groups; ++g) {
      const int64_t first = g * kInt8ScaleGroup, count = std::min<int64_t>(kInt8ScaleGroup, k - first);
      alignas(32) float v[kInt8ScaleGroup] = {};
      std::copy(row + first, row + first + count, v);
      __m256 max = _mm256_setzero_ps();
      for (int i = 0; i < kInt8ScaleGroup; i += 8) max = _mm256_max_ps(max, _mm256_andnot_ps(sign, _mm256_load_ps(v + i)));
      alignas(32) float lanes[8];
      _mm256_store_ps(lanes, max);
      const float amax = *std::max_element(lanes, lanes + 8);
      const float inverse = amax > 0.0f ? levels / amax : 0.0f;
      alignas(32) int32_t q[kInt8ScaleGroup];
      for (int i = 0; i < kInt8ScaleGroup; i += 8)  // round to nearest even, as std::nearbyint
        _mm256_store_si256(reinterpret_cast<__m256i*>(q + i),
                           _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_load_ps(v + i), _mm256_set1_ps(inverse))));
      int8_t* out = a.q + r * a.planes * plane_stride + first;
      int32_t* offsets = a.offset_sum + r * a.planes * a.groups + g;
      int32_t sum_hi = 0, sum_lo = 0;
      for (int i = 0; i < kInt8ScaleGroup; ++i) {  // integer work: any order gives the same bits
        if (a.planes == 1) {
          out[i] = static_cast<int8_t>(q[i]);
          sum_hi += q[i];
        } else {
          const int32_t hi = (q[i] + 128) >> 8, lo = q[i] - 256 * hi;
          out[i] = static_cast<int8_t>(hi);
          out[plane_stride + i] = static_cast<int8_t>(lo);
          sum_hi += hi;
          sum_lo += lo;
        }
      }
      offsets[0] = -128 * sum_hi;
      if (a.planes == 2) offsets[a.groups] = -128 * sum_lo;
      a.scales[r * a.groups + g] = amax / levels;
    }
  }
}

void matmul_int8_avx2(const Int8Activations& a, int64_t m, const TensorView& w, int64_t panel_begin, int64_t panel_end,
                      float* y) {
  DS_CHECK(w.format == WeightFormatId::int8_panels, "int8 kernel on ", w.name);
  DS_CHECK(a.planes == w.activation_planes, "activations with ", a.planes, " planes for ", w.name);
  const int64_t n = w.shape[0], k = w.shape[1], panel_bytes = int8_panel_bytes(k);
  for (int64_t p = panel_begin; p < panel_end; ++p) {
    const int64_t first_col = p * kInt8PanelRows, rows = std::min(kInt8PanelRows, n - first_col);
    const std::byte* panel = w.data + p * panel_bytes;
    if (m == 1) {  // decode: the panel streams once, all four slices together
      panel_row(a, 0, panel, y + first_col, rows);
      continue;
    }
    int64_t r = 0;
    for (; r + kTile <= m; r += kTile) panel_tile<kTile>(a, r, panel, y + first_col, n, rows);
    switch (m - r) {  // the last tokens
      case 3: panel_tile<3>(a, r, panel, y + first_col, n, rows); break;
      case 2: panel_tile<2>(a, r, panel, y + first_col, n, rows); break;
      case 1: panel_tile<1>(a, r, panel, y + first_col, n, rows); break;
      default: break;
    }
  }
}

}  // namespace ds::kernels
