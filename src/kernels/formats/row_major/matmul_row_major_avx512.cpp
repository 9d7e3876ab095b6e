// AVX-512 matmul micro-kernels (compiled with -mavx512f/bw/vl/bf16; called only after detect_isa).
// Dot-product form: each output owns one zmm accumulator that walks k in steps of 32 (bf16) or 16
// (fp32) with a masked tail, then a fixed horizontal sum — the same sequence for every tile shape,
// which is what makes results independent of the batch. Tiles of up to 4 rows × 4 weight rows keep
// 16 accumulators in registers; x rows are reused from L2 in blocks of 64 rows per weight tile.
#include <immintrin.h>

#include <algorithm>

#include "kernels/formats/row_major/row_major_kernels.h"
#include "kernels/cpu/tile_loop.h"
#include "util/check.h"

namespace ds::kernels {
namespace {

// Horizontal sum in a fixed butterfly order (the same for every output).
inline float horizontal_sum(__m512 v) {
  v = _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
  v = _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, _MM_SHUFFLE(2, 3, 0, 1)));
  v = _mm512_add_ps(v, _mm512_permute_ps(v, _MM_SHUFFLE(1, 0, 3, 2)));
  v = _mm512_add_ps(v, _mm512_permute_ps(v, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm512_cvtss_f32(v);
}

// Weight rows read from memory start at a 4 KiB page each (a row of 2,048 bf16), where hardware
// prefetch stops; so each tile also prefetches (into L2) the rows 8 ahead of its own, at the rate it
// consumes its own: one line per row per step. `ahead` is null when those rows are not this
// thread's. Measured on a 6144 × 2048 weight, 2 threads: m = 1 15–19% faster, m = 4 33%, m = 8
// 8–16%, m = 16 16%, m = 64 unchanged.
template <int R, int C>
void tile_bf16(const uint16_t* x, const uint16_t* w, int64_t k, float* y, int64_t ldy, const uint16_t* ahead) {
  __m512 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
  int64_t kk = 0;
  for (; kk + 32 <= k; kk += 32) {
    __m512i wv[C];
    for (int c = 0; c < C; ++c) wv[c] = _mm512_loadu_si512(w + c * k + kk);
    if (ahead)
      for (int c = 0; c < C; ++c) _mm_prefetch(reinterpret_cast<const char*>(ahead + c * k + kk), _MM_HINT_T1);
    for (int r = 0; r < R; ++r) {
      const __m512i xv = _mm512_loadu_si512(x + r * k + kk);
      for (int c = 0; c < C; ++c) acc[r][c] = _mm512_dpbf16_ps(acc[r][c], (__m512bh)xv, (__m512bh)wv[c]);
    }
  }
  if (kk < k) {
    const auto mask = static_cast<__mmask32>((uint64_t{1} << (k - kk)) - 1);
    __m512i wv[C];
    for (int c = 0; c < C; ++c) wv[c] = _mm512_maskz_loadu_epi16(mask, w + c * k + kk);
    for (int r = 0; r < R; ++r) {
      const __m512i xv = _mm512_maskz_loadu_epi16(mask, x + r * k + kk);
      for (int c = 0; c < C; ++c) acc[r][c] = _mm512_dpbf16_ps(acc[r][c], (__m512bh)xv, (__m512bh)wv[c]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) y[r * ldy + c] = horizontal_sum(acc[r][c]);
}

// 16 weights widened to fp32 (lanes past `mask` are zero).
inline __m512 load_weights(DType dtype, const std::byte* base, int64_t index, __mmask16 mask) {
  switch (dtype) {
    case DType::BF16: {
      const __m256i raw = _mm256_maskz_loadu_epi16(mask, base + 2 * index);
      return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(raw), 16));
    }
    case DType::F16: return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mask, base + 2 * index));
    default: return _mm512_maskz_loadu_ps(mask, base + 4 * index);
  }
}

template <int R, int C>
void tile_f32(const float* x, const TensorView& weights, int64_t first_col, int64_t k, float* y, int64_t ldy) {
  const DType dtype = weights.dtype;
  const std::byte* w = weights.data;
  __m512 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
  for (int64_t kk = 0; kk < k; kk += 16) {
    const auto mask = static_cast<__mmask16>(k - kk >= 16 ? 0xffff : (1u << (k - kk)) - 1);
    __m512 wv[C];
    for (int c = 0; c < C; ++c) wv[c] = load_weights(dtype, w, (first_col + c) * k + kk, mask);
    for (int r = 0; r < R; ++r) {
      const __m512 xv = _mm512_maskz_loadu_ps(mask, x + r * k + kk);
      for (int c = 0; c < C; ++c) acc[r][c] = _mm512_fmadd_ps(xv, wv[c], acc[r][c]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) y[r * ldy + c] = horizontal_sum(acc[r][c]);
}

using TileBf16 = void (*)(const uint16_t*, const uint16_t*, int64_t, float*, int64_t, const uint16_t*);
using TileF32 = void (*)(const float*, const TensorView&, int64_t, int64_t, float*, int64_t);

template <int R>
constexpr TileBf16 bf16_row[4] = {tile_bf16<R, 1>, tile_bf16<R, 2>, tile_bf16<R, 3>, tile_bf16<R, 4>};
constexpr const TileBf16* kTilesBf16[4] = {bf16_row<1>, bf16_row<2>, bf16_row<3>, bf16_row<4>};
template <int R>
constexpr TileF32 f32_row[4] = {tile_f32<R, 1>, tile_f32<R, 2>, tile_f32<R, 3>, tile_f32<R, 4>};
constexpr const TileF32* kTilesF32[4] = {f32_row<1>, f32_row<2>, f32_row<3>, f32_row<4>};

}  // namespace

void matmul_bf16_avx512(const uint16_t* xb, int64_t m, const TensorView& w, int64_t col_begin, int64_t col_end,
                        float* y) {
  DS_CHECK(w.dtype == DType::BF16, "bf16 kernel on ", dtype_name(w.dtype));
  const int64_t n = w.shape[0], k = w.shape[1];
  const auto* weights = reinterpret_cast<const uint16_t*>(w.data);
  constexpr int64_t kAhead = 8;  // rows between a tile and the rows it prefetches
  auto ahead = [&](int64_t c, int64_t cols) { return c + kAhead + cols <= col_end ? weights + (c + kAhead) * k : nullptr; };
  if (m == 1) {  // decode: 8 weight rows in flight per step for more memory-level parallelism
    int64_t c = col_begin;
    for (; c + 8 <= col_end; c += 8) tile_bf16<1, 8>(xb, weights + c * k, k, y + c, n, ahead(c, 8));
    for (; c < col_end; c += 4) kTilesBf16[0][std::min<int64_t>(4, col_end - c) - 1](xb, weights + c * k, k, y + c, n, nullptr);
    return;
  }
  // The first x tile of each row block streams the weight tile from memory; the others find it in L1.
  for_each_tile(m, col_begin, col_end, [&](int64_t r, int64_t rows, int64_t c, int64_t cols) {
    kTilesBf16[rows - 1][cols - 1](xb + r * k, weights + c * k, k, y + r * n + c, n,
                                   r % kTileRowBlock == 0 ? ahead(c, cols) : nullptr);
  });
}

void matmul_f32_avx512(const float* x, int64_t m, const TensorView& w, int64_t col_begin, int64_t col_end, float* y) {
  DS_CHECK(w.dtype == DType::BF16 || w.dtype == DType::F16 || w.dtype == DType::F32, "f32 kernel on ",
           dtype_name(w.dtype));
  const int64_t n = w.shape[0], k = w.shape[1];
  for_each_tile(m, col_begin, col_end, [&](int64_t r, int64_t rows, int64_t c, int64_t cols) {
    kTilesF32[rows - 1][cols - 1](x + r * k, w, c, k, y + r * n + c, n);
  });
}

void round_to_bf16_avx512(const float* x, int64_t count, uint16_t* out) {
  for (int64_t i = 0; i < count; i += 16) {
    const auto mask = static_cast<__mmask16>(count - i >= 16 ? 0xffff : (1u << (count - i)) - 1);
    const __m256bh rounded = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(mask, x + i));
    _mm256_mask_storeu_epi16(out + i, mask, (__m256i)rounded);
  }
}

}  // namespace ds::kernels
