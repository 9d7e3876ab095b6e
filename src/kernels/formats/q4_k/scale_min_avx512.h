// The vector form of ScaleMinType (q4_k.h) for the K-quant driver (kquant_matmul_avx512.h): a unit's
// side bytes (d, dmin, the 12 scale bytes of 16 rows) unpacked into each group's d · sc_j and
// dmin · m_j, and the group's update. Shared by the Q4_K and Q5_K kernels.
#pragma once

#include <immintrin.h>

#include "kernels/formats/kquant/kquant_matmul_avx512.h"

namespace ds::kernels {

struct ScaleMinAvx512 {
  struct Scales {
    __m512 scale[kGroupsPerSuperblock];    // d · sc_j of 16 rows
    __m512 minimum[kGroupsPerSuperblock];  // dmin · m_j
  };
  // side: d [16] fp16, dmin [16] fp16, then byte e of the 12 scale bytes for 16 rows at 64 + 16·e.
  static void load_scale_min(const std::byte* side, Scales& s) {
    const __m512 d = kquant_fp16_field(side), dmin = kquant_fp16_field(side + 32);
    const std::byte* bytes = side + 64;
    const __m512i low6 = _mm512_set1_epi32(63), low4 = _mm512_set1_epi32(15);
    for (int j = 0; j < 4; ++j) {
      const __m512i sc_lo = kquant_u8_field(bytes + 16 * j), m_lo = kquant_u8_field(bytes + 16 * (j + 4));
      const __m512i mixed = kquant_u8_field(bytes + 16 * (j + 8));
      const __m512i sc = _mm512_and_si512(sc_lo, low6), m = _mm512_and_si512(m_lo, low6);
      const __m512i sc_hi = _mm512_or_si512(_mm512_and_si512(mixed, low4), _mm512_slli_epi32(_mm512_srli_epi32(sc_lo, 6), 4));
      const __m512i m_hi = _mm512_or_si512(_mm512_srli_epi32(mixed, 4), _mm512_slli_epi32(_mm512_srli_epi32(m_lo, 6), 4));
      s.scale[j] = _mm512_mul_ps(d, _mm512_cvtepi32_ps(sc));
      s.minimum[j] = _mm512_mul_ps(dmin, _mm512_cvtepi32_ps(m));
      s.scale[j + 4] = _mm512_mul_ps(d, _mm512_cvtepi32_ps(sc_hi));
      s.minimum[j + 4] = _mm512_mul_ps(dmin, _mm512_cvtepi32_ps(m_hi));
    }
  }
  // One dot per group: the halves share a scale.
  static constexpr bool kHalves = false;
  static constexpr int kCodeOffset = 0;  // the codes are the 4- or 5-bit values themselves
  static __m512i start(const int32_t*) { return _mm512_setzero_si512(); }
  static __m512 finish(__m512 acc, __m512i dot, __m512i, const Scales& s, int64_t j, float sx, float scaled_sum) {
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(s.scale[j], _mm512_set1_ps(sx)), acc);
    return _mm512_fnmadd_ps(s.minimum[j], _mm512_set1_ps(scaled_sum), acc);
  }
};

}  // namespace ds::kernels
