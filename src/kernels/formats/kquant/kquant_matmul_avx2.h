// The AVX2 matmul over K-quant panels (CPUs without AVX-512 VNNI), shared by every type: included by
// each type's matmul_*_avx2.cpp (compiled with -mavx2 -mfma -mf16c) with a policy, like the AVX-512
// driver (kquant_matmul_avx512.h) whose arithmetic it repeats bit for bit: a 512-bit quad vector of
// 16 rows is two 256-bit halves of 8 rows here, and 4-input dots are `vpmaddubsw` pair sums (no
// saturation: codes ≤ 63, or signed table values ≤ 127 through `vpsignb`, times |xq| ≤ 127) added by
// `vpmaddwd`. Integer sums are exact in any order and each output's fp32 sequence is the reference's.
// Decode takes one token through both halves of a panel and prefetches the panel's stream as
// cpu_tuning() says (Zen 3: 2B Q4_K_M decode 46–55% of the floor without, 65–70% 3 KiB ahead); larger
// batches take tiles of tokens through one half at a time, each code vector unpacked once per tile.
//
// Policy (per half h of a panel: rows 8h .. 8h+7):
//   kCodeBytes, kSideBytes; Scales, load_scales(side, h, Scales&); codes(codes, j, v, h, lo, hi);
//   kPairSums, pairs(codes, x) (default: unsigned codes); start(neg_half_sum); finish(acc, lo, hi, Scales, j, sx, sum)
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "io/tensor_view.h"
#include "kernels/cpu/cpu_tuning.h"
#include "kernels/formats/kquant/kquant_activations.h"
#include "kernels/formats/kquant/kquant_prefetch.h"
#include "kernels/formats/kquant/kquant_type.h"
#include "util/check.h"

namespace ds::kernels {

// Policies whose codes are unsigned bytes (all but IQ4_XS) take their pair sums from here. kPairSums:
// how many `vpmaddubsw` results (int16 pair sums, |each| ≤ 2 · max code · 127) may be added in int16
// before `vpmaddwd` widens them; 1 for codes up to 127.
struct KquantUnsignedCodesAvx2 {
  static constexpr int kPairSums = 1;
  static __m256i pairs(__m256i codes, __m256i x) { return _mm256_maddubs_epi16(codes, x); }
};

// Σ over each lane's 4 pairs' products, as int32: P's pair sums widened.
template <class P>
inline __m256i kquant_dot4_avx2(__m256i codes, __m256i x) {
  return _mm256_madd_epi16(P::pairs(codes, x), _mm256_set1_epi16(1));
}

// Quads v and v + 4 of a group's activations xg [32] (the inputs of code vectors lo and hi), each
// broadcast to every lane.
inline void kquant_quads_avx2(const int8_t* xg, int v, __m256i& x_lo, __m256i& x_hi) {
  int32_t quad_lo, quad_hi;
  std::memcpy(&quad_lo, xg + 4 * v, 4);
  std::memcpy(&quad_hi, xg + 16 + 4 * v, 4);
  x_lo = _mm256_set1_epi32(quad_lo), x_hi = _mm256_set1_epi32(quad_hi);
}

// A superblock's bytes in the panels' stream: codes, side bytes, padding to a cache line.
template <class P>
inline constexpr int64_t kKquantStride = kquant_superblock_bytes(P::kCodeBytes, P::kSideBytes);

template <class P>
void kquant_token_avx2(const KquantActivations& a, int64_t r, const std::byte* panel, int64_t superblocks, float* y,
                       int64_t rows, KquantPrefetch prefetch) {
  const int64_t groups = a.codes.groups;
  const int8_t* x = a.codes.q + r * groups * kKquantGroup;
  __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
  for (int64_t b = 0; b < superblocks; ++b) {
    const std::byte* codes = panel + b * kKquantStride<P>;
    const std::byte* side = codes + P::kCodeBytes;
    typename P::Scales scales[2];
    P::load_scales(side, 0, scales[0]);
    P::load_scales(side, 1, scales[1]);
    for (int64_t j = 0; j < kGroupsPerSuperblock; ++j) {
      const int64_t g = b * kGroupsPerSuperblock + j;
      kquant_prefetch_ahead<kKquantStride<P>>(codes, j, prefetch);
      const int32_t* neg_half_sums = a.neg_half_sums + (r * groups + g) * 2;
      const int8_t* xg = x + g * kKquantGroup;
      for (int h = 0; h < 2; ++h) {
        __m256i lo = P::start(neg_half_sums), hi = P::start(neg_half_sums + 1);
        for (int v = 0; v < 4; ++v) {
          __m256i w_lo, w_hi, x_lo, x_hi;
          P::codes(codes, j, v, h, w_lo, w_hi);
          kquant_quads_avx2(xg, v, x_lo, x_hi);
          lo = _mm256_add_epi32(lo, kquant_dot4_avx2<P>(w_lo, x_lo));
          hi = _mm256_add_epi32(hi, kquant_dot4_avx2<P>(w_hi, x_hi));
        }
        acc[h] = P::finish(acc[h], lo, hi, scales[h], j, a.codes.scales[r * groups + g], a.scaled_sums[r * groups + g]);
      }
    }
  }
  float out[kKquantPanelRows];
  _mm256_storeu_ps(out, acc[0]);
  _mm256_storeu_ps(out + 8, acc[1]);
  std::memcpy(y, out, static_cast<size_t>(rows) * 4);
}

// Tokens r0 .. r0 + T − 1 against one panel (prefill, verify): half h's 8 rows at a time, so that each
// code vector is loaded and unpacked once for the T tokens and each half's scales once per superblock,
// with T accumulators and T pairs of integer sums in registers. Every output's fp32 sequence is
// kquant_token_avx2's (the same finish per group, groups in order), so the tile is bit-identical to it.
template <class P, int T>
void kquant_tile_avx2(const KquantActivations& a, int64_t r0, const std::byte* panel, int64_t superblocks, float* y,
                      int64_t n, int64_t rows, KquantPrefetch prefetch) {
  const int64_t groups = a.codes.groups;
  float out[T][kKquantPanelRows];
  for (int h = 0; h < 2; ++h) {
    __m256 acc[T];
    for (int t = 0; t < T; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < superblocks; ++b) {
      const std::byte* codes = panel + b * kKquantStride<P>;
      typename P::Scales scales;
      P::load_scales(codes + P::kCodeBytes, h, scales);
      for (int64_t j = 0; j < kGroupsPerSuperblock; ++j) {
        const int64_t g = b * kGroupsPerSuperblock + j;
        if (h == 0) kquant_prefetch_ahead<kKquantStride<P>>(codes, j, prefetch);
        __m256i lo[T], hi[T];
        for (int t = 0; t < T; ++t) {
          const int32_t* neg_half_sums = a.neg_half_sums + ((r0 + t) * groups + g) * 2;
          lo[t] = P::start(neg_half_sums), hi[t] = P::start(neg_half_sums + 1);
        }
        // kPairSums (1, 2 or 4) pair vectors are summed in int16, then widened and added.
        constexpr int kSums = P::kPairSums;
        static_assert(kSums == 1 || kSums == 2 || kSums == 4, "pair sums: 1, 2 or 4 of a group's 4 quads");
        __m256i sum_lo[T] = {}, sum_hi[T] = {};  // set at v % kSums == 0; initialised for GCC 12's -Wmaybe-uninitialized
        for (int v = 0; v < 4; ++v) {
          __m256i w_lo, w_hi;
          P::codes(codes, j, v, h, w_lo, w_hi);
          for (int t = 0; t < T; ++t) {
            __m256i x_lo, x_hi;
            kquant_quads_avx2(a.codes.q + ((r0 + t) * groups + g) * kKquantGroup, v, x_lo, x_hi);
            const __m256i p_lo = P::pairs(w_lo, x_lo), p_hi = P::pairs(w_hi, x_hi);
            sum_lo[t] = v % kSums == 0 ? p_lo : _mm256_add_epi16(sum_lo[t], p_lo);
            sum_hi[t] = v % kSums == 0 ? p_hi : _mm256_add_epi16(sum_hi[t], p_hi);
            if (v % kSums == kSums - 1) {
              lo[t] = _mm256_add_epi32(lo[t], _mm256_madd_epi16(sum_lo[t], _mm256_set1_epi16(1)));
              hi[t] = _mm256_add_epi32(hi[t], _mm256_madd_epi16(sum_hi[t], _mm256_set1_epi16(1)));
            }
          }
        }
        for (int t = 0; t < T; ++t) {
          const int64_t at = (r0 + t) * groups + g;
          acc[t] = P::finish(acc[t], lo[t], hi[t], scales, j, a.codes.scales[at], a.scaled_sums[at]);
        }
      }
    }
    for (int t = 0; t < T; ++t) _mm256_storeu_ps(out[t] + 8 * h, acc[t]);
  }
  for (int t = 0; t < T; ++t) std::memcpy(y + (r0 + t) * n, out[t], static_cast<size_t>(rows) * 4);
}

// Tokens per tile, measured on Zen 3 (one thread, a 6144 × 2048 Q4_K weight): 4 tokens in
// 0.86–0.89 ms (tiles of 3: 0.93–0.97; one token at a time: 1.19–1.22), 512 in 108–112 ms (108–127;
// 148–153).
inline constexpr int64_t kKquantAvx2Tile = 4;

// y[m, n] for panels [panel_begin, panel_end) of w (a panels view of P's type).
template <class P>
void matmul_kquant_avx2(const std::byte* activations, int64_t m, const ActivationOptions&, const TensorView& w,
                        int64_t panel_begin, int64_t panel_end, float* y) {
  const int64_t n = w.shape[0], k = w.shape[1], superblocks = k / kSuperblock;
  DS_CHECK(k % kSuperblock == 0, "K-quant kernel on ", w.name, " with rows of ", k, " values");
  const KquantActivations a = kquant_activations_in(activations, m, k);
  const int64_t panel_bytes = kquant_panel_bytes(P::kCodeBytes, P::kSideBytes, k);
  const KquantPrefetch prefetch = cpu_tuning().kquant_decode_prefetch;
  for (int64_t p = panel_begin; p < panel_end; ++p) {
    const int64_t first_row = p * kKquantPanelRows, rows = std::min(kKquantPanelRows, n - first_row);
    const std::byte* panel = w.data + p * panel_bytes;
    float* y_panel = y + first_row;
    if (m == 1) {  // decode: the panel streams from memory once, both halves together, prefetched
      kquant_token_avx2<P>(a, 0, panel, superblocks, y_panel, rows, prefetch);
      continue;
    }
    int64_t r = 0;  // the first tile reads the panel from memory (prefetched), the others from cache
    for (; r + kKquantAvx2Tile <= m; r += kKquantAvx2Tile)
      kquant_tile_avx2<P, kKquantAvx2Tile>(a, r, panel, superblocks, y_panel, n, rows, r == 0 ? prefetch : KquantPrefetch{});
    if (m - r == 3) kquant_tile_avx2<P, 3>(a, r, panel, superblocks, y_panel, n, rows, r == 0 ? prefetch : KquantPrefetch{});
    if (m - r == 2) kquant_tile_avx2<P, 2>(a, r, panel, superblocks, y_panel, n, rows, r == 0 ? prefetch : KquantPrefetch{});
    if (m - r == 1) kquant_tile_avx2<P, 1>(a, r, panel, superblocks, y_panel, n, rows, KquantPrefetch{});
  }
}

// u8 codes of quads v and v + 4 of group j for half h, low 4 bits only.
inline void kquant_nibbles_avx2(const std::byte* codes, int64_t j, int v, int h, __m256i& lo, __m256i& hi) {
  const __m256i nibbles = _mm256_load_si256(reinterpret_cast<const __m256i*>(codes + 256 * j + 64 * v + 32 * h));
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  lo = _mm256_and_si256(nibbles, low4);
  hi = _mm256_and_si256(_mm256_srli_epi16(nibbles, 4), low4);
}

// Half h's 8 rows of a field of 16 rows at `at` (element size 1 or 2), widened.
inline __m256 kquant_fp16_half(const std::byte* at, int h) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at + 16 * h)));
}
inline __m256i kquant_u8_half(const std::byte* at, int h) {
  return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(at + 8 * h)));
}
inline __m256i kquant_i8_half(const std::byte* at, int h) {
  return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(at + 8 * h)));
}

}  // namespace ds::kernels
