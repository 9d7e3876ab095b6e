// The AVX-512 VNNI matmul over K-quant panels, shared by every type: included by each type's
// matmul_*_avx512.cpp (compiled with -mavx512f/bw/vl/vnni) with a policy that says how its codes
// and scales unpack (kquant_type.h has the layout, the type's accumulate() the arithmetic).
//
// Per token, panel and group of 32 inputs: the 8 quads of codes (16 rows × 4 inputs, one per int32
// lane) are multiplied by the token's 4 activation bytes broadcast with `vpdpbusd` into two int32
// accumulators — inputs 0–15 and 16–31, started at the policy's offset for that half — and the
// policy's finish() turns them into the fp32 accumulator's update. Every lane is one output row, so
// there are no horizontal sums, and each output's sequence of operations is the same for every
// batch, tile shape and thread split: the type's accumulate() in vector form.
//
// Policy:
//   kCodeBytes, kSideBytes             a superblock's codes and side bytes (kquant_type.h's panel layout)
//   Scales, load_scales(side, Scales&) what a superblock's 8 groups need, unpacked once per superblock
//   codes(codes, j, v, lo, hi)         u8 codes of quads v and v + 4 of group j
//   kHalves                            whether the halves of a group need their own dots (else one dot,
//                                      passed as lo)
//   start(neg_half_sums)               the int32 accumulator's first value, from the group's −Σ xq over
//                                      each half (a pointer to the pair): a half's (with kHalves, called
//                                      at the pair and one past it) or the whole group's
//   finish(acc, lo, hi, Scales, j, sx, scaled_sum)   acc plus the group's contribution
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "io/tensor_view.h"
#include "kernels/cpu/cpu_tuning.h"
#include "kernels/formats/kquant/kquant_activations.h"
#include "kernels/formats/kquant/kquant_prefetch.h"
#include "kernels/formats/kquant/kquant_type.h"
#include "util/check.h"

namespace ds::kernels {

// Up to kKquantTileTokens tokens × one 16-row panel: 3 vectors per token (fp32 accumulator and two
// int32 dots) plus the codes and scales in the 32 zmm registers. Every tile unpacks the panel's codes
// again, so a batch of decodes takes tiles of up to 8 (8 tokens on the AMX Xeon: Q4_K 14.5 → 17.5
// GB/s, Q6_K 15.9 → 17.6, against 6 + 2); prefill takes 6, which measured at least as fast as 8 and
// 10 there (Q4_K 0.71 of int8 panels' MAC rate, against 0.67 and 0.62, one Zen 5 thread).
inline constexpr int kKquantTileTokens = 8;
inline constexpr int kKquantPrefillTileTokens = 6;
// Calls of up to this many tokens (decode, a batch of decodes or verifies up to --max-num-seqs'
// default) take tiles of kKquantTileTokens; more (prefill), of kKquantPrefillTileTokens.
inline constexpr int64_t kKquantBatchTokens = 16;

template <class P, int R>
void kquant_tile(const KquantActivations& a, int64_t r0, const std::byte* panel, int64_t superblocks, float* y,
                 int64_t ldy, int64_t rows, KquantPrefetch prefetch) {
  const int64_t groups = a.codes.groups, stride = groups * kKquantGroup;
  __m512 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  constexpr int64_t kStride = kquant_superblock_bytes(P::kCodeBytes, P::kSideBytes);
  for (int64_t b = 0; b < superblocks; ++b) {
    const std::byte* codes = panel + b * kStride;
    const std::byte* side = codes + P::kCodeBytes;
    typename P::Scales scales;
    P::load_scales(side, scales);
    for (int64_t j = 0; j < kGroupsPerSuperblock; ++j) {
      const int64_t g = b * kGroupsPerSuperblock + j;
      kquant_prefetch_ahead<kStride>(codes, j, prefetch);
      __m512i lo[R], hi[R] = {};  // hi: unused without kHalves
      for (int r = 0; r < R; ++r) {
        const int32_t* neg_half_sums = a.neg_half_sums + ((r0 + r) * groups + g) * 2;
        lo[r] = P::start(neg_half_sums);
        if constexpr (P::kHalves) hi[r] = P::start(neg_half_sums + 1);
      }
      for (int v = 0; v < 4; ++v) {
        __m512i w_lo, w_hi;
        P::codes(codes, j, v, w_lo, w_hi);
        for (int r = 0; r < R; ++r) {
          const int8_t* x = a.codes.q + (r0 + r) * stride + g * kKquantGroup;
          int32_t quad_lo, quad_hi;
          std::memcpy(&quad_lo, x + 4 * v, 4);
          std::memcpy(&quad_hi, x + 16 + 4 * v, 4);
          lo[r] = _mm512_dpbusd_epi32(lo[r], w_lo, _mm512_set1_epi32(quad_lo));
          if constexpr (P::kHalves) hi[r] = _mm512_dpbusd_epi32(hi[r], w_hi, _mm512_set1_epi32(quad_hi));
          else lo[r] = _mm512_dpbusd_epi32(lo[r], w_hi, _mm512_set1_epi32(quad_hi));
        }
      }
      for (int r = 0; r < R; ++r) {
        const int64_t at = (r0 + r) * groups + g;
        acc[r] = P::finish(acc[r], lo[r], hi[r], scales, j, a.codes.scales[at], a.scaled_sums[at]);
      }
    }
  }
  const auto mask = static_cast<__mmask16>(rows >= 16 ? 0xffff : (1u << rows) - 1);
  for (int r = 0; r < R; ++r) _mm512_mask_storeu_ps(y + r * ldy, mask, acc[r]);
}

// One token × one panel (decode, and a batch's last lone token): kquant_tile<P, 1>'s arithmetic with
// more independent work in flight — two groups at a time, and each group's halves in two dot chains
// even where the type has one dot a group (added in int32 before finish(): exact). A group's eight
// `vpdpbusd` in one chain left a thread at ~29 cycles a Q4_K group from L2 on the AMX Xeon; with
// these, ~24 (docs/benchmarks.md).
template <class P>
void kquant_token_tile(const KquantActivations& a, int64_t r0, const std::byte* panel, int64_t superblocks, float* y,
                       int64_t, int64_t rows, KquantPrefetch prefetch) {
  constexpr int kPair = 2;
  static_assert(kGroupsPerSuperblock % kPair == 0);
  const int64_t groups = a.codes.groups;
  const int8_t* xq = a.codes.q + r0 * groups * kKquantGroup;   // [groups, 32]
  const int32_t* neg_half_sums = a.neg_half_sums + r0 * groups * 2;  // [groups, 2]
  const float* sx = a.codes.scales + r0 * groups;                // [groups]
  const float* scaled_sums = a.scaled_sums + r0 * groups;        // [groups]
  constexpr int64_t kStride = kquant_superblock_bytes(P::kCodeBytes, P::kSideBytes);
  __m512 acc = _mm512_setzero_ps();
  for (int64_t b = 0; b < superblocks; ++b) {
    const std::byte* codes = panel + b * kStride;
    typename P::Scales scales;
    P::load_scales(codes + P::kCodeBytes, scales);
    for (int64_t j0 = 0; j0 < kGroupsPerSuperblock; j0 += kPair) {
      __m512i lo[kPair], hi[kPair];  // registers only while every loop over them is unrolled
#pragma GCC unroll 2
      for (int u = 0; u < kPair; ++u) {
        kquant_prefetch_ahead<kStride>(codes, j0 + u, prefetch);
        const int32_t* half_sums = neg_half_sums + (b * kGroupsPerSuperblock + j0 + u) * 2;
        lo[u] = P::start(half_sums);
        hi[u] = P::kHalves ? P::start(half_sums + 1) : _mm512_setzero_si512();
      }
#pragma GCC unroll 4
      for (int v = 0; v < 4; ++v)
#pragma GCC unroll 2
        for (int u = 0; u < kPair; ++u) {
          __m512i w_lo, w_hi;
          P::codes(codes, j0 + u, v, w_lo, w_hi);
          const int8_t* x = xq + (b * kGroupsPerSuperblock + j0 + u) * kKquantGroup;
          int32_t quad_lo, quad_hi;
          std::memcpy(&quad_lo, x + 4 * v, 4);
          std::memcpy(&quad_hi, x + 16 + 4 * v, 4);
          lo[u] = _mm512_dpbusd_epi32(lo[u], w_lo, _mm512_set1_epi32(quad_lo));
          hi[u] = _mm512_dpbusd_epi32(hi[u], w_hi, _mm512_set1_epi32(quad_hi));
        }
#pragma GCC unroll 2
      for (int u = 0; u < kPair; ++u) {
        const int64_t j = j0 + u, g = b * kGroupsPerSuperblock + j;
        const __m512i dot = P::kHalves ? lo[u] : _mm512_add_epi32(lo[u], hi[u]);
        acc = P::finish(acc, dot, hi[u], scales, j, sx[g], scaled_sums[g]);
      }
    }
  }
  _mm512_mask_storeu_ps(y, static_cast<__mmask16>(rows >= 16 ? 0xffff : (1u << rows) - 1), acc);
}

template <class P, int... R>
constexpr auto kquant_tiles(std::integer_sequence<int, R...>) {
  using Tile = void (*)(const KquantActivations&, int64_t, const std::byte*, int64_t, float*, int64_t, int64_t, KquantPrefetch);
  return std::array<Tile, sizeof...(R)>{(R == 0 ? kquant_token_tile<P> : kquant_tile<P, R + 1>)...};
}

// y[m, n] for panels [panel_begin, panel_end) of w (a panels view of P's type).
template <class P>
void matmul_kquant_avx512(const std::byte* activations, int64_t m, const ActivationOptions&, const TensorView& w,
                          int64_t panel_begin, int64_t panel_end, float* y) {
  const int64_t n = w.shape[0], k = w.shape[1], superblocks = k / kSuperblock;
  DS_CHECK(k % kSuperblock == 0, "K-quant kernel on ", w.name, " with rows of ", k, " values");
  const KquantActivations a = kquant_activations_in(activations, m, k);
  const int64_t panel_bytes = kquant_panel_bytes(P::kCodeBytes, P::kSideBytes, k);
  static constexpr auto tiles = kquant_tiles<P>(std::make_integer_sequence<int, kKquantTileTokens>());
  // A block's first token tile over a panel reads it from memory, prefetching this CPU's distance
  // ahead; the block's other tiles read it from cache. (In prefill too: on the AMX Xeon at --isa
  // avx512, Q4_K 292–308 → 316–331 GMAC/s, Q6_K 194–200 → 232–239.) Both made once, not per call: a
  // struct built at each call is passed on the stack written in parts and read whole, a failed store
  // forwarding each time (a quarter of Q4_K prefill's time).
  const KquantPrefetch stream = cpu_tuning().kquant_decode_prefetch, none{};
  // Tokens in blocks whose activations (~k bytes each) stay in L2 beside one panel while the
  // thread's panels stream past: each weight byte comes from memory once per block.
  const int64_t tile_tokens = m <= kKquantBatchTokens ? kKquantTileTokens : kKquantPrefillTileTokens;
  const int64_t block = std::max<int64_t>(tile_tokens, 256 * 1024 / k / tile_tokens * tile_tokens);
  for (int64_t b0 = 0; b0 < m; b0 += block) {
    const int64_t b_end = std::min(m, b0 + block);
    for (int64_t p = panel_begin; p < panel_end; ++p) {
      const std::byte* panel = w.data + p * panel_bytes;
      const int64_t first_row = p * kKquantPanelRows, rows = std::min(kKquantPanelRows, n - first_row);
      for (int64_t r = b0; r < b_end; r += tile_tokens) {
        const int64_t count = std::min<int64_t>(tile_tokens, b_end - r);
        tiles[count - 1](a, r, panel, superblocks, y + r * n + first_row, n, rows, r == b0 ? stream : none);
      }
    }
  }
}

// u8 codes of quads v (inputs 4v..4v+3) and v + 4 (inputs 16+4v..) of group j, low 4 bits only.
inline void kquant_nibbles(const std::byte* codes, int64_t j, int v, __m512i& lo, __m512i& hi) {
  const __m512i nibbles = _mm512_load_si512(codes + 256 * j + 64 * v);
  const __m512i low4 = _mm512_set1_epi8(0x0f);
  lo = _mm512_and_si512(nibbles, low4);
  hi = _mm512_and_si512(_mm512_srli_epi16(nibbles, 4), low4);
}

// 16 rows' fp16 field at `at` as fp32.
inline __m512 kquant_fp16_field(const std::byte* at) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(at)));
}
// 16 rows' byte of a field at `at`, zero- or sign-extended to int32 lanes.
inline __m512i kquant_u8_field(const std::byte* at) {
  return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at)));
}
inline __m512i kquant_i8_field(const std::byte* at) {
  return _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at)));
}

}  // namespace ds::kernels
