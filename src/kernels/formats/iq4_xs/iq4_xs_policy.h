// IQ4_XS's policy for the K-quant drivers (kquant_matmul_avx512.h, kquant_matmul_amx.h): how its codes
// and scales unpack into vectors and how a group's dots enter the accumulator; arithmetic: iq4_xs.h.
// The table's values + 128 are unsigned bytes, looked up with one `vpshufb` per quad; a group's dot
// starts at −128 · Σ xq, which takes the 128 back out. One scale per group: one dot (no halves), so
// the AMX kernel takes a group in one tile product.
//
// In an unnamed namespace: each kernel's file (VNNI, AMX) compiles its own copy for its own ISA.
#pragma once

#include <bit>

#include "kernels/formats/iq4_xs/iq4_xs.h"
#include "kernels/formats/kquant/kquant_matmul_avx512.h"

namespace ds::kernels {
namespace {

struct Iq4XsPolicy {
  static constexpr int64_t kCodeBytes = kNibbleBytes, kSideBytes = 16 * 136 - kCodeBytes;
  struct Scales {
    __m512 step[kGroupsPerSuperblock];  // d · (ls_j − 32) of 16 rows (exact in fp32)
  };
  // side: d [16] fp16, scales_h [16] u16 at 32, byte e of scales_l for 16 rows at 64 + 16·e.
  static void load_scales(const std::byte* side, Scales& s) {
    const __m512 d = kquant_fp16_field(side);
    const __m512i high = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(side + 32)));
    const __m512i low4 = _mm512_set1_epi32(15), low2 = _mm512_set1_epi32(3), bias = _mm512_set1_epi32(32);
    for (int j = 0; j < kGroupsPerSuperblock; ++j) {
      __m512i low = kquant_u8_field(side + 64 + 16 * (j / 2));
      if (j % 2) low = _mm512_srli_epi32(low, 4);
      const __m512i high_bits = _mm512_and_si512(_mm512_srlv_epi32(high, _mm512_set1_epi32(2 * j)), low2);
      const __m512i ls = _mm512_or_si512(_mm512_and_si512(low, low4), _mm512_slli_epi32(high_bits, 4));
      const __m512i scale = _mm512_sub_epi32(ls, bias);
      s.step[j] = _mm512_mul_ps(d, _mm512_cvtepi32_ps(scale));
    }
  }
  static void codes(const std::byte* codes, int64_t j, int v, __m512i& lo, __m512i& hi) {
    kquant_nibbles(codes, j, v, lo, hi);
    static const std::array<uint8_t, 16> values = [] {
      std::array<uint8_t, 16> biased{};
      for (int i = 0; i < 16; ++i) biased[i] = static_cast<uint8_t>(kIq4Values[i] + 128);
      return biased;
    }();
    const __m512i table = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(values.data())));
    lo = _mm512_shuffle_epi8(table, lo);
    hi = _mm512_shuffle_epi8(table, hi);
  }
  static constexpr bool kHalves = false;
  // The codes are the values + kCodeOffset (unsigned, for `vpdpbusd`): a group's dot starts at
  // −128 · Σ xq, the sum of its halves' sums.
  static constexpr int kCodeOffset = 128;
  static __m512i start(const int32_t* neg_half_sums) {
    const int32_t neg_sum = neg_half_sums[0] + neg_half_sums[1];
    return _mm512_slli_epi32(_mm512_set1_epi32(neg_sum), std::countr_zero(unsigned{kCodeOffset}));
  }
  static __m512 finish(__m512 acc, __m512i dot, __m512i, const Scales& s, int64_t j, float sx, float) {
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(s.step[j], _mm512_set1_ps(sx)), acc);
  }
};

}  // namespace
}  // namespace ds::kernels
