// ScaleMinType (q4_k.h) in AVX2 form for kquant_matmul_avx2.h: half h's scales of a unit and the
// group's update, as scale_min_avx512.h does for 16 rows. Shared by the Q4_K and Q5_K kernels.
#pragma once

#include <immintrin.h>

#include "kernels/formats/kquant/kquant_matmul_avx2.h"

namespace ds::kernels {

struct ScaleMinAvx2 : KquantUnsignedCodesAvx2 {
  // Codes ≤ 31 (Q5_K; Q4_K's ≤ 15): four pair sums ≤ 4 · 2 · 31 · 127 = 31,496 fit int16.
  static constexpr int kPairSums = 4;
  struct Scales {
    __m256 scale[kGroupsPerSuperblock];    // d · sc_j of 8 rows
    __m256 minimum[kGroupsPerSuperblock];  // dmin · m_j
  };
  // side: d [16] fp16, dmin [16] fp16, then byte e of the 12 scale bytes for 16 rows at 64 + 16·e.
  static void load_scale_min(const std::byte* side, int h, Scales& s) {
    const __m256 d = kquant_fp16_half(side, h), dmin = kquant_fp16_half(side + 32, h);
    const std::byte* bytes = side + 64;
    const __m256i low6 = _mm256_set1_epi32(63), low4 = _mm256_set1_epi32(15);
    for (int j = 0; j < 4; ++j) {
      const __m256i sc_lo = kquant_u8_half(bytes + 16 * j, h), m_lo = kquant_u8_half(bytes + 16 * (j + 4), h);
      const __m256i mixed = kquant_u8_half(bytes + 16 * (j + 8), h);
      const __m256i sc = _mm256_and_si256(sc_lo, low6), m = _mm256_and_si256(m_lo, low6);
      const __m256i sc_hi = _mm256_or_si256(_mm256_and_si256(mixed, low4), _mm256_slli_epi32(_mm256_srli_epi32(sc_lo, 6), 4));
      const __m256i m_hi = _mm256_or_si256(_mm256_srli_epi32(mixed, 4), _mm256_slli_epi32(_mm256_srli_epi32(m_lo, 6), 4));
      s.scale[j] = _mm256_mul_ps(d, _mm256_cvtepi32_ps(sc));
      s.minimum[j] = _mm256_mul_ps(dmin, _mm256_cvtepi32_ps(m));
      s.scale[j + 4] = _mm256_mul_ps(d, _mm256_cvtepi32_ps(sc_hi));
      s.minimum[j + 4] = _mm256_mul_ps(dmin, _mm256_cvtepi32_ps(m_hi));
    }
  }
  static __m256i start(const int32_t*) { return _mm256_setzero_si256(); }
  static __m256 finish(__m256 acc, __m256i lo, __m256i hi, const Scales& s, int64_t j, float sx, float scaled_sum) {
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(lo, hi)), _mm256_mul_ps(s.scale[j], _mm256_set1_ps(sx)), acc);
    return _mm256_fnmadd_ps(s.minimum[j], _mm256_set1_ps(scaled_sum), acc);
  }
};

}  // namespace ds::kernels
