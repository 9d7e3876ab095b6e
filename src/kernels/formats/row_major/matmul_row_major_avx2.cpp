// AVX2 + FMA matmul micro-kernel (compiled with -mavx2 -mfma -mf16c; called only after
// detect_isa): fp32 activations · weights widened to fp32, 8 lanes per accumulator, a scalar tail in
// index order and a fixed horizontal sum — the same order for every tile shape.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/formats/row_major/row_major_kernels.h"
#include "kernels/cpu/tile_loop.h"
#include "kernels/weight_access.h"
#include "util/check.h"

namespace ds::kernels {
namespace {

inline __m256 load8(DType dtype, const std::byte* base, int64_t index) {
  switch (dtype) {
    case DType::BF16: {
      const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(base + 2 * index));
      return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(raw), 16));
    }
    case DType::F16: return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(base + 2 * index)));
    default: return _mm256_loadu_ps(reinterpret_cast<const float*>(base + 4 * index));
  }
}

inline float horizontal_sum(__m256 v) {
  const __m128 pair = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 quad = _mm_add_ps(pair, _mm_movehl_ps(pair, pair));
  return _mm_cvtss_f32(_mm_add_ss(quad, _mm_shuffle_ps(quad, quad, 1)));
}

template <int R, int C>
void tile(const float* x, const TensorView& w, int64_t first_col, int64_t k, float* y, int64_t ldy) {
  __m256 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  int64_t kk = 0;
  for (; kk + 8 <= k; kk += 8) {
    __m256 wv[C];
    for (int c = 0; c < C; ++c) wv[c] = load8(w.dtype, w.data, (first_col + c) * k + kk);
    for (int r = 0; r < R; ++r) {
      const __m256 xv = _mm256_loadu_ps(x + r * k + kk);
      for (int c = 0; c < C; ++c) acc[r][c] = _mm256_fmadd_ps(xv, wv[c], acc[r][c]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      float sum = horizontal_sum(acc[r][c]);
      for (int64_t i = kk; i < k; ++i) sum += x[r * k + i] * weight_at(w, (first_col + c) * k + i);
      y[r * ldy + c] = sum;
    }
}

using Tile = void (*)(const float*, const TensorView&, int64_t, int64_t, float*, int64_t);
template <int R>
constexpr Tile row_tiles[4] = {tile<R, 1>, tile<R, 2>, tile<R, 3>, tile<R, 4>};
constexpr const Tile* kTiles[4] = {row_tiles<1>, row_tiles<2>, row_tiles<3>, row_tiles<4>};

}  // namespace

void matmul_f32_avx2(const float* x, int64_t m, const TensorView& w, int64_t col_begin, int64_t col_end, float* y) {
  DS_CHECK(w.dtype == DType::BF16 || w.dtype == DType::F16 || w.dtype == DType::F32, "f32 kernel on ",
           dtype_name(w.dtype));
  const int64_t n = w.shape[0], k = w.shape[1];
  for_each_tile(m, col_begin, col_end, [&](int64_t r, int64_t rows, int64_t c, int64_t cols) {
    kTiles[rows - 1][cols - 1](x + r * k, w, c, k, y + r * n + c, n);
  });
}

}  // namespace ds::kernels
