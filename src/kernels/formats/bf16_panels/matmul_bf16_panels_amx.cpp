// AMX bf16 matmul on weights in the bf16 panel layout (bf16_panels.h), compiled with -mamx-tile
// -mamx-bf16 and AVX-512; called only at Isa::amx.
//
// A panel's block of 16 pairs, read with a 128-byte stride, is two B tiles (outputs 0–15 and 16–31
// of the panel); 16 token rows × 16 pairs of the activations are an A tile; `tdpbf16ps` adds one
// into a 16 tokens × 16 outputs fp32 C tile. Every output's C element starts at 0 and takes the
// tile products over k in order whatever the batch, the blocking or the thread split, and a row of
// C depends only on its own token, so a row's result never depends on the batch (tested); its
// arithmetic is bf16_panels_amx_reference.cpp's (bit for bit, tested).
//
// Decode (m <= 4): the same arithmetic in AVX-512 vectors, one sequential stream per thread (see
// vector_panels). Small batches (m <= 16): the tiles are configured to m rows, and two panels
// stream at once (4 C tiles) with software prefetches a few tiles ahead. Prefill: 32 tokens × one panel (2 × 2 C tiles) per pass over k, so each tile
// loaded serves two products; a block of tokens stays in L2 while the thread's panels pass.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/amx_tiles.h"
#include "kernels/cpu/cpu_tuning.h"
#include "kernels/cpu/stream_prefetch.h"
#include "kernels/formats/bf16_panels/bf16_panels.h"
#include "kernels/formats/bf16_panels/bf16_panels_kernels.h"
#include "util/check.h"

namespace ds::kernels {
namespace {

// Tiles (literal numbers, amx_tiles.h): C0–C3 accumulators, A0–A1 activations, B0–B1 weights (A1
// is a third B tile in decode).
#define C0 0
#define C1 1
#define C2 2
#define C3 3
#define A0 4
#define A1 5
#define B0 6
#define B1 7
constexpr int64_t kStepBytes = kBf16PanelPairAlign * kBf16PairBytes;  // 2 KiB of a panel: 16 pairs
// Decode's prefetch distance in steps: 2B decode read 80–82% of the bandwidth floor with none,
// 86–89% with 2 or 4 steps, 80% with 8 (2 threads, docs/benchmarks.md).
constexpr int64_t kPrefetchSteps = 2;

TileConfig config_for(int rows) {
  TileConfig config;
  for (int t : {C0, C1, C2, C3, A0}) config.tile(t, rows, kAmxTileBytes);
  for (int t : {A1, B0, B1}) config.tile(t, kAmxTileRows, kAmxTileBytes);  // A1: 16 tokens, or a B tile
  return config;
}

// Copies a stored C tile's first `rows` rows and `columns` outputs to y (rows ldy floats apart).
void copy_out(const float* scratch, float* y, int64_t ldy, int rows, int columns) {
  for (int r = 0; r < rows; ++r) std::memcpy(y + r * ldy, scratch + r * 16, static_cast<size_t>(columns) * 4);
}

// Stores C tile t ([tile_rows][16] fp32) at y: straight when whole, else its first `valid_rows`
// tokens and `columns` outputs (the last panel's rows past n are padding) through a scratch tile.
#define STORE_C(t, y, ldy, tile_rows, valid_rows, columns)          \
  do {                                                              \
    if ((columns) == 16 && (valid_rows) == (tile_rows)) {           \
      DS_TILE_STORE(t, y, (ldy) * 4);                               \
    } else {                                                        \
      alignas(64) float scratch_[kAmxTileRows * 16];                \
      DS_TILE_STORE(t, scratch_, 64);                               \
      copy_out(scratch_, y, ldy, valid_rows, columns);              \
    }                                                               \
  } while (0)

// Each line `requests` times (stream_prefetch.h; this CPU's decode_prefetch.requests): on the AMX
// Xeon, 8 requests decoding at once (`bench --concurrency 8`, bf16) stepped in 140–150 ms at the
// median instead of 167–174 with one request a line.
inline void prefetch_step(const std::byte* p, int requests) {
  for (int64_t offset = 0; offset < kStepBytes; offset += 64) prefetch_line<_MM_HINT_T0>(p + offset, requests);
}

// m <= 16 tokens: panels in pairs, the whole k each.
void small_batch(const uint32_t* xr, int64_t m, const TensorView& w, int64_t panel_begin, int64_t panel_end, float* y) {
  const int64_t n = w.shape[0], k = w.shape[1], steps = bf16_panel_pairs(k) / kBf16PanelPairAlign;
  const int64_t panel_bytes = bf16_panel_bytes(k), x_stride = bf16_amx_row_words(k) * 4;
  const int rows = static_cast<int>(m), requests = cpu_tuning().decode_prefetch.requests;
  for (int64_t p = panel_begin; p < panel_end; p += 2) {
    const bool two = p + 1 < panel_end;
    const std::byte* w0 = w.data + p * panel_bytes;
    const std::byte* w1 = w0 + panel_bytes;
    DS_TILE_ZERO(C0);
    DS_TILE_ZERO(C1);
    DS_TILE_ZERO(C2);
    DS_TILE_ZERO(C3);
    for (int64_t s = 0; s < steps; ++s) {
      prefetch_step(w0 + (s + kPrefetchSteps) * kStepBytes, requests);
      if (two) prefetch_step(w1 + (s + kPrefetchSteps) * kStepBytes, requests);
      DS_TILE_LOAD(A0, xr + s * kBf16PanelPairAlign, x_stride);
      DS_TILE_LOAD(B0, w0 + s * kStepBytes, kBf16PairBytes);
      DS_TILE_DPBF16PS(C0, A0, B0);
      DS_TILE_LOAD(B1, w0 + s * kStepBytes + 64, kBf16PairBytes);
      DS_TILE_DPBF16PS(C1, A0, B1);
      if (two) {
        DS_TILE_LOAD(A1, w1 + s * kStepBytes, kBf16PairBytes);
        DS_TILE_DPBF16PS(C2, A0, A1);
        DS_TILE_LOAD(B0, w1 + s * kStepBytes + 64, kBf16PairBytes);
        DS_TILE_DPBF16PS(C3, A0, B0);
      }
    }
    for (int64_t q = p; q < p + (two ? 2 : 1); ++q) {
      const int64_t first = q * kBf16PanelRows;
      const int lo = static_cast<int>(std::clamp<int64_t>(n - first, 0, 16));
      const int hi = static_cast<int>(std::clamp<int64_t>(n - first - 16, 0, 16));
      if (q == p) {
        STORE_C(C0, y + first, n, rows, rows, lo);
        if (hi > 0) STORE_C(C1, y + first + 16, n, rows, rows, hi);
      } else {
        STORE_C(C2, y + first, n, rows, rows, lo);
        if (hi > 0) STORE_C(C3, y + first + 16, n, rows, rows, hi);
      }
    }
  }
}

// Up to kVectorRows tokens: the tile arithmetic in AVX-512 vectors, one panel at a time. Each zmm of
// a pair block holds 16 outputs' (even, odd) inputs; the even halves widen exactly (<< 16), the odd
// ones by masking, and fma adds each exact product into an even or odd partial per output, which
// every 16 pairs is added to the accumulator as (even + odd): the `tdpbf16ps` sequence, bit for bit
// (the tiles' flushing of denormals aside). Decode is one sequential stream per thread then, with
// the prefetch this CPU wants (cpu_tuning.h): 2B decode on the Xeon read 88–90% of the floor with
// the AVX-512 kernel's stream against 80–89% for two panels of tile loads.
constexpr int kVectorRows = 4;

template <int R>
void vector_panels(const uint32_t* xr, int64_t row_words, const TensorView& w, int64_t panel_begin, int64_t panel_end,
                   float* y, StreamPrefetch prefetch) {
  const int64_t n = w.shape[0], k = w.shape[1], pairs = bf16_panel_pairs(k), panel_bytes = bf16_panel_bytes(k);
  const __m512i odd_mask = _mm512_set1_epi32(static_cast<int>(0xffff0000u));
  for (int64_t p = panel_begin; p < panel_end; ++p) {
    const std::byte* panel = w.data + p * panel_bytes;
    __m512 acc[R][2];
    for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
    for (int64_t j0 = 0; j0 < pairs; j0 += kBf16PanelPairAlign) {
      __m512 even[R][2], odd[R][2];
      for (int r = 0; r < R; ++r) even[r][0] = even[r][1] = odd[r][0] = odd[r][1] = _mm512_setzero_ps();
      for (int64_t j = j0; j < j0 + kBf16PanelPairAlign; ++j) {
        const std::byte* block = panel + j * kBf16PairBytes;
        if (prefetch.bytes > 0) {
          prefetch_line<_MM_HINT_T0>(block + prefetch.bytes, prefetch.requests);
          prefetch_line<_MM_HINT_T0>(block + prefetch.bytes + 64, prefetch.requests);
        }
        __m512 we[2], wo[2];
        for (int h = 0; h < 2; ++h) {
          const __m512i words = _mm512_loadu_si512(block + 64 * h);
          we[h] = _mm512_castsi512_ps(_mm512_slli_epi32(words, 16));
          wo[h] = _mm512_castsi512_ps(_mm512_and_si512(words, odd_mask));
        }
        for (int r = 0; r < R; ++r) {
          const uint32_t word = xr[r * row_words + j];
          const __m512 xe = _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int>(word << 16)));
          const __m512 xo = _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int>(word & 0xffff0000u)));
          for (int h = 0; h < 2; ++h) {
            even[r][h] = _mm512_fmadd_ps(xe, we[h], even[r][h]);
            odd[r][h] = _mm512_fmadd_ps(xo, wo[h], odd[r][h]);
          }
        }
      }
      for (int r = 0; r < R; ++r)
        for (int h = 0; h < 2; ++h) acc[r][h] = _mm512_add_ps(acc[r][h], _mm512_add_ps(even[r][h], odd[r][h]));
    }
    const int64_t first = p * kBf16PanelRows;
    const int lo = static_cast<int>(std::clamp<int64_t>(n - first, 0, 16));
    const int hi = static_cast<int>(std::clamp<int64_t>(n - first - 16, 0, 16));
    const auto mask_lo = static_cast<__mmask16>(lo >= 16 ? 0xffff : (1u << lo) - 1);
    const auto mask_hi = static_cast<__mmask16>(hi >= 16 ? 0xffff : (1u << hi) - 1);
    for (int r = 0; r < R; ++r) {
      _mm512_mask_storeu_ps(y + r * n + first, mask_lo, acc[r][0]);
      _mm512_mask_storeu_ps(y + r * n + first + 16, mask_hi, acc[r][1]);
    }
  }
}

using VectorPanels = void (*)(const uint32_t*, int64_t, const TensorView&, int64_t, int64_t, float*, StreamPrefetch);
constexpr VectorPanels kVectorPanels[kVectorRows] = {vector_panels<1>, vector_panels<2>, vector_panels<3>,
                                                     vector_panels<4>};

// Prefill: a token block's activations (~1 MiB: 14 tiles of 16 tokens at k = 2048, 4 at k = 6144)
// stay in L2 while each of the thread's panels passes over them once, so the weights come from
// memory once per block. Measured on one core (m = 512): 1.0–1.2 TFLOP/s at 6144 × 2048 and
// 0.9–1.0 at 2048 × 6144, against 0.11 for the AVX-512 kernel; slicing k so that B stays in L1,
// 8–16-tile blocks and software prefetches of the next panel were all within this VM's noise.
constexpr int64_t kTokenBlockBytes = 1 << 20;

void prefill(const uint32_t* xr, int64_t m, const TensorView& w, int64_t panel_begin, int64_t panel_end, float* y) {
  const int64_t n = w.shape[0], k = w.shape[1], steps = bf16_panel_pairs(k) / kBf16PanelPairAlign;
  const int64_t panel_bytes = bf16_panel_bytes(k), row_words = bf16_amx_row_words(k), x_stride = row_words * 4;
  const int64_t tiles = (m + kAmxTileRows - 1) / kAmxTileRows;
  const int64_t block = std::max<int64_t>(2, kTokenBlockBytes / (kAmxTileRows * x_stride) / 2 * 2);
  for (int64_t t0 = 0; t0 < tiles; t0 += block) {
    const int64_t t_end = std::min(tiles, t0 + block);
    for (int64_t p = panel_begin; p < panel_end; ++p) {
      const std::byte* wp = w.data + p * panel_bytes;
      const int64_t first = p * kBf16PanelRows;
      const int lo = static_cast<int>(std::clamp<int64_t>(n - first, 0, 16));
      const int hi = static_cast<int>(std::clamp<int64_t>(n - first - 16, 0, 16));
      for (int64_t t = t0; t < t_end; t += 2) {
        const bool two = t + 1 < t_end;
        const uint32_t* x0 = xr + t * kAmxTileRows * row_words;
        const uint32_t* x1 = x0 + kAmxTileRows * row_words;
        DS_TILE_ZERO(C0);
        DS_TILE_ZERO(C1);
        DS_TILE_ZERO(C2);
        DS_TILE_ZERO(C3);
        if (two) {
          for (int64_t s = 0; s < steps; ++s) {
            const std::byte* ws = wp + s * kStepBytes;
            DS_TILE_LOAD(A0, x0 + s * kBf16PanelPairAlign, x_stride);
            DS_TILE_LOAD(A1, x1 + s * kBf16PanelPairAlign, x_stride);
            DS_TILE_LOAD(B0, ws, kBf16PairBytes);
            DS_TILE_LOAD(B1, ws + 64, kBf16PairBytes);
            DS_TILE_DPBF16PS(C0, A0, B0);
            DS_TILE_DPBF16PS(C1, A0, B1);
            DS_TILE_DPBF16PS(C2, A1, B0);
            DS_TILE_DPBF16PS(C3, A1, B1);
          }
        } else {
          for (int64_t s = 0; s < steps; ++s) {
            const std::byte* ws = wp + s * kStepBytes;
            DS_TILE_LOAD(A0, x0 + s * kBf16PanelPairAlign, x_stride);
            DS_TILE_LOAD(B0, ws, kBf16PairBytes);
            DS_TILE_LOAD(B1, ws + 64, kBf16PairBytes);
            DS_TILE_DPBF16PS(C0, A0, B0);
            DS_TILE_DPBF16PS(C1, A0, B1);
          }
        }
        const int rows0 = static_cast<int>(std::min<int64_t>(16, m - t * kAmxTileRows));
        float* y0 = y + t * kAmxTileRows * n + first;
        STORE_C(C0, y0, n, kAmxTileRows, rows0, lo);
        if (hi > 0) STORE_C(C1, y0 + 16, n, kAmxTileRows, rows0, hi);
        if (two) {
          const int rows1 = static_cast<int>(std::min<int64_t>(16, m - (t + 1) * kAmxTileRows));
          float* y1 = y0 + kAmxTileRows * n;
          STORE_C(C2, y1, n, kAmxTileRows, rows1, lo);
          if (hi > 0) STORE_C(C3, y1 + 16, n, kAmxTileRows, rows1, hi);
        }
      }
    }
  }
}

#undef STORE_C
#undef C0
#undef C1
#undef C2
#undef C3
#undef A0
#undef A1
#undef B0
#undef B1

}  // namespace

void pack_bf16_rows_amx(const float* x, int64_t m, int64_t k, int64_t r_begin, int64_t r_end, uint32_t* out) {
  const int64_t row_words = bf16_amx_row_words(k), padded = bf16_panel_pairs(k);
  for (int64_t r = r_begin; r < r_end; ++r) {
    const float* row = x + r * k;
    uint32_t* dst = out + r * row_words;
    for (int64_t j0 = 0; j0 < padded; j0 += 16) {  // 32 inputs → 16 pairs, rounded to nearest even
      const int64_t first = 2 * j0, count = std::clamp<int64_t>(k - first, 0, 32);
      const auto in0 = static_cast<__mmask16>(count >= 16 ? 0xffff : (1u << count) - 1);
      const auto in1 = static_cast<__mmask16>(count >= 32 ? 0xffff : count <= 16 ? 0 : (1u << (count - 16)) - 1);
      const __m512bh packed = _mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(in1, row + first + 16),
                                                  _mm512_maskz_loadu_ps(in0, row + first));
      _mm512_storeu_si512(dst + j0, (__m512i)packed);
    }
  }
  if (r_end == m) {  // the last tile's padding rows
    const int64_t padded_rows = (m + kAmxTileRows - 1) / kAmxTileRows * kAmxTileRows;
    std::memset(out + m * row_words, 0, static_cast<size_t>((padded_rows - m) * row_words) * 4);
  }
}

void matmul_bf16_panels_amx(const uint32_t* xr, int64_t m, const TensorView& w, int64_t panel_begin, int64_t panel_end,
                            float* y) {
  DS_CHECK(w.dtype == DType::BF16 && w.format == WeightFormatId::bf16_panels, "AMX bf16 panel kernel on ", w.name);
  if (m <= kVectorRows)
    return kVectorPanels[m - 1](xr, bf16_amx_row_words(w.shape[1]), w, panel_begin, panel_end, y,
                                cpu_tuning().decode_prefetch);
  const TileScope tiles(config_for(static_cast<int>(std::min<int64_t>(m, kAmxTileRows))));
  if (m <= kAmxTileRows) small_batch(xr, m, w, panel_begin, panel_end, y);
  else prefill(xr, m, w, panel_begin, panel_end, y);
}

}  // namespace ds::kernels
