// AVX2 + FMA + F16C matmul on FP8 panels (fp8_panels.h), compiled with -mavx2 -mfma -mf16c: how
// block-FP8 weights run on CPUs without AVX-512 BF16 and VBMI. The arithmetic is fp8_format.h's.
//
// Widening. Half h of a pair's 64 bytes (lanes 2h and 2h + 1 of the packed order) becomes four
// vectors of 8 fp32: the odd and the even input of rows A = {8h .. 8h+3, 16+8h .. 16+8h+3} and
// B = {8h+4 .. 8h+7, 24+8h .. 24+8h+3}. A `vpshufb` puts each lane's even codes before its odd ones;
// per byte, shifts and masks build the fp16 whose bits are the code's with a 5-bit exponent field
// (e4m3 is sign, 4 exponent and 3 mantissa bits, bias 7; fp16 has bias 15), so its value is exactly
// the code's / 256, subnormals included (code 0x7f / 0xff, NaN, is made an fp16 NaN); `vpunpck*bw`
// makes the words and `vcvtph2ps` the fp32 (exact). The block scale, times 256 (exact), takes the
// factor back: a block partial of the values / 256 is the fp8_format.h partial / 256 at every step
// (scaling by a power of 2 commutes with rounding above fp32's subnormal range, which a partial of
// products of bf16 activations and e4m3 values, ≥ 2^-9 each, reaches only for activations near
// 2^-110; `vdpbf16ps`, the AVX-512 kernel's, flushes those to zero), and fma(256 · scale, p / 256,
// acc) = fma(scale, p, acc). So every output is the reference's, bit for bit: per pair the odd
// product then the even one into a block partial from +0 (each product exact, each sum rounded: an
// FMA), per block one fma with the scale, blocks in order.
//
// Tiles: R tokens × the H halves of a panel per pass over its pairs, R·H ≤ 4 so that the R·H·2
// partials, the four widened vectors and the broadcasts stay in AVX2's 16 registers. One token takes
// both halves in one pass (decode: each byte read once); 3 or more take one half a pass, the second
// half's bytes coming from L2. The accumulators live in a 32-row buffer per token in L1 between
// blocks (lanes in A / B order), written to y once at the end.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/cpu_tuning.h"
#include "kernels/cpu/stream_prefetch.h"
#include "kernels/formats/bf16_panels/bf16_panels_kernels.h"
#include "kernels/formats/fp8/fp8_kernels.h"
#include "kernels/formats/fp8/fp8_panels.h"
#include "util/check.h"

namespace ds::kernels {
namespace {

constexpr int kMaxTile = 4;  // tokens × halves per pass

// The fp32 values / 256 of half h of a packed pair: odd and even inputs of rows A and B.
struct Widened {
  __m256 odd_a, odd_b, even_a, even_b;
};

inline Widened widen(const std::byte* half) {
  // Per lane: the even codes (bytes 0, 2, ..., 14: rows 4L .. 4L+3, 16+4L .. 16+4L+3), then the odd ones.
  const __m256i order = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15,  //
                                         0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
  const __m256i c = _mm256_shuffle_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(half)), order);
  const __m256i sign = _mm256_and_si256(c, _mm256_set1_epi8(static_cast<char>(0x80)));
  // fp16 high byte: sign, then the exponent and the mantissa's top 2 bits (16-bit shifts: the masks
  // drop what crossed from the neighbouring byte); low byte: the mantissa's last bit at its top.
  __m256i hi = _mm256_or_si256(sign, _mm256_and_si256(_mm256_srli_epi16(c, 1), _mm256_set1_epi8(0x3f)));
  const __m256i nan = _mm256_cmpeq_epi8(_mm256_andnot_si256(sign, c), _mm256_set1_epi8(0x7f));
  hi = _mm256_or_si256(hi, _mm256_and_si256(nan, _mm256_set1_epi8(0x40)));  // exponent field all ones
  const __m256i lo = _mm256_and_si256(_mm256_slli_epi16(c, 7), _mm256_set1_epi8(static_cast<char>(0x80)));
  const __m256i even = _mm256_unpacklo_epi8(lo, hi), odd = _mm256_unpackhi_epi8(lo, hi);  // lane 0: A, lane 1: B
  return {_mm256_cvtph_ps(_mm256_castsi256_si128(odd)), _mm256_cvtph_ps(_mm256_extracti128_si256(odd, 1)),
          _mm256_cvtph_ps(_mm256_castsi256_si128(even)), _mm256_cvtph_ps(_mm256_extracti128_si256(even, 1))};
}

// acc[r][16h .. 16h+16) += the panel's outputs of halves h0 .. h0 + H − 1 for tokens r < R, in A / B
// lane order. x: the first token's fp32 pair row (ldx floats between tokens); prefetch: how (cpu_tuning.h).
template <int R, int H>
void tile(const float* x, int64_t ldx, const std::byte* panel, int64_t k, int h0, float (*acc)[kFp8PanelRows],
          StreamPrefetch prefetch) {
  static_assert(R * H <= kMaxTile && H <= 2);
  const auto* scales = reinterpret_cast<const float*>(panel);
  const std::byte* codes = panel + fp8_header_bytes(k);
  const int64_t pairs = fp8_pairs(k);
  for (int64_t j0 = 0, b = 0; j0 < pairs; j0 += kFp8BlockPairs, ++b) {
    __m256 part[R][H][2];  // [token][half][A, B]
    for (int r = 0; r < R; ++r)
      for (int hh = 0; hh < H; ++hh) part[r][hh][0] = part[r][hh][1] = _mm256_setzero_ps();
    for (int64_t j = j0; j < std::min(pairs, j0 + kFp8BlockPairs); ++j) {
      if (prefetch.bytes > 0) prefetch_line<_MM_HINT_T0>(codes + j * kFp8PairBytes + prefetch.bytes, prefetch.requests);
      for (int hh = 0; hh < H; ++hh) {
        const Widened w = widen(codes + j * kFp8PairBytes + 32 * (h0 + hh));
        for (int r = 0; r < R; ++r) {
          const __m256 x_odd = _mm256_broadcast_ss(x + r * ldx + 2 * j + 1);
          const __m256 x_even = _mm256_broadcast_ss(x + r * ldx + 2 * j);
          part[r][hh][0] = _mm256_fmadd_ps(x_even, w.even_a, _mm256_fmadd_ps(x_odd, w.odd_a, part[r][hh][0]));
          part[r][hh][1] = _mm256_fmadd_ps(x_even, w.even_b, _mm256_fmadd_ps(x_odd, w.odd_b, part[r][hh][1]));
        }
      }
    }
    const __m256 scale = _mm256_set1_ps(scales[b] * 256.0f);
    for (int r = 0; r < R; ++r)
      for (int hh = 0; hh < H; ++hh)
        for (int v = 0; v < 2; ++v) {
          float* a = acc[r] + 16 * (h0 + hh) + 8 * v;
          _mm256_store_ps(a, _mm256_fmadd_ps(scale, part[r][hh][v], _mm256_load_ps(a)));
        }
  }
}

using Tile = void (*)(const float*, int64_t, const std::byte*, int64_t, int, float (*)[kFp8PanelRows], StreamPrefetch);

// Tokens r0 .. r0 + count − 1 (count ≤ kMaxTile) against one panel: y[r, 0 .. rows).
void panel_tokens(const float* x, int64_t ldx, int64_t count, const std::byte* panel, int64_t k, float* y, int64_t ldy,
                  int64_t rows, StreamPrefetch prefetch) {
  // Both halves in one pass where the registers allow (1 or 2 tokens), else a pass per half.
  static constexpr Tile kBoth[2] = {tile<1, 2>, tile<2, 2>};
  static constexpr Tile kOne[kMaxTile] = {tile<1, 1>, tile<2, 1>, tile<3, 1>, tile<4, 1>};
  alignas(32) float acc[kMaxTile][kFp8PanelRows] = {};  // [token][A / B lanes of half 0, then half 1]
  if (count <= 2) {
    kBoth[count - 1](x, ldx, panel, k, 0, acc, prefetch);
  } else {
    kOne[count - 1](x, ldx, panel, k, 0, acc, prefetch);
    kOne[count - 1](x, ldx, panel, k, 1, acc, StreamPrefetch{});
  }
  // Lane i of half h's A / B vector is row 8h + 4v + i (i < 4) or 16 + 8h + 4v + i − 4.
  for (int64_t r = 0; r < count; ++r) {
    float out[kFp8PanelRows];
    for (int h = 0; h < 2; ++h)
      for (int v = 0; v < 2; ++v)
        for (int i = 0; i < 8; ++i) out[(i < 4 ? 0 : 12) + 8 * h + 4 * v + i] = acc[r][16 * h + 8 * v + i];
    std::memcpy(y + r * ldy, out, static_cast<size_t>(rows) * sizeof(float));
  }
}

}  // namespace

void matmul_fp8_panels_avx2(const float* x, int64_t m, const TensorView& w, int64_t panel_begin, int64_t panel_end,
                            float* y) {
  DS_CHECK(w.format == WeightFormatId::fp8_panels, "FP8 panel kernel on ", w.name);
  const int64_t n = w.shape[0], k = w.shape[1], panel_bytes = fp8_panel_bytes(k);
  const int64_t ldx = bf16_f32_pair_row_floats(k);
  const StreamPrefetch prefetch = m <= kMaxTile ? cpu_tuning().decode_prefetch : StreamPrefetch{};
  // Tokens in blocks whose activations (8 bytes per pair) stay in L2 while the thread's panels pass.
  const int64_t block = std::max<int64_t>(kMaxTile, 256 * 1024 / (ldx * 4) / kMaxTile * kMaxTile);
  for (int64_t b0 = 0; b0 < m; b0 += block) {
    const int64_t b_end = std::min(m, b0 + block);
    for (int64_t p = panel_begin; p < panel_end; ++p) {
      const int64_t rows = std::min(kFp8PanelRows, n - p * kFp8PanelRows);
      for (int64_t r = b0; r < b_end; r += kMaxTile)
        panel_tokens(x + r * ldx, ldx, std::min<int64_t>(kMaxTile, b_end - r), w.data + p * panel_bytes, k,
                     y + r * n + p * kFp8PanelRows, n, rows, prefetch);
    }
  }
}

}  // namespace ds::kernels
