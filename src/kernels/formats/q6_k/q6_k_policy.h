// Q6_K's policy for the K-quant drivers (kquant_matmul_avx512.h, kquant_matmul_amx.h): how its codes
// and scales unpack into vectors and how a group's dots enter the accumulator; arithmetic: q6_k.h. The
// codes are unsigned (0..63): each half's dot starts at −32 · Σ xq, which makes it Σ (q − 32) · xq.
//
// In an unnamed namespace: each kernel's file (VNNI, AMX) compiles its own copy for its own ISA.
#pragma once

#include <bit>

#include "kernels/formats/kquant/kquant_matmul_avx512.h"
#include "kernels/formats/q6_k/q6_k.h"

namespace ds::kernels {
namespace {

struct Q6KPolicy {
  static constexpr int64_t kCodeBytes = kNibbleBytes + 1024, kSideBytes = 16 * 210 - kCodeBytes;
  struct Scales {
    __m512 step[16];  // d · sc of each 16-input sub-block, 16 rows (exact in fp32)
  };
  // side: sub-block s's int8 scales of 16 rows at 16·s, then d [16] fp16 at 256.
  static void load_scales(const std::byte* side, Scales& s) {
    const __m512 d = kquant_fp16_field(side + 256);
    for (int sub = 0; sub < 16; ++sub)
      s.step[sub] = _mm512_mul_ps(d, _mm512_cvtepi32_ps(kquant_i8_field(side + 16 * sub)));
  }
  // The high 2 bits of quad v sit at bits 2v, 2v+1 of each byte of the group's half-plane: moved to
  // bits 4–5 (16-bit shifts; the mask drops what crossed from the neighbouring byte).
  static __m512i with_high(__m512i low, __m512i plane, int v) {
    const __m512i shifted = v == 0 ? _mm512_slli_epi16(plane, 4)
                            : v == 1 ? _mm512_slli_epi16(plane, 2)
                            : v == 2 ? plane
                                     : _mm512_srli_epi16(plane, 2);
    return _mm512_or_si512(low, _mm512_and_si512(shifted, _mm512_set1_epi8(0x30)));
  }
  static void codes(const std::byte* codes, int64_t j, int v, __m512i& lo, __m512i& hi) {
    kquant_nibbles(codes, j, v, lo, hi);
    const std::byte* planes = codes + kNibbleBytes + 128 * j;
    lo = with_high(lo, _mm512_load_si512(planes), v);
    hi = with_high(hi, _mm512_load_si512(planes + 64), v);
  }
  static constexpr bool kHalves = true;
  // The codes are q + kCodeOffset (unsigned, for `vpdpbusd`): each half's dot starts at −32 · Σ xq.
  static constexpr int kCodeOffset = 32;
  static __m512i start(const int32_t* neg_half_sum) {
    return _mm512_slli_epi32(_mm512_set1_epi32(*neg_half_sum), std::countr_zero(unsigned{kCodeOffset}));
  }
  // q6_k.h's arithmetic: t = fma(step_a, dot_a, step_b · dot_b), acc = fma(t, sx, acc).
  static __m512 finish(__m512 acc, __m512i lo, __m512i hi, const Scales& s, int64_t j, float sx, float) {
    const __m512 t = _mm512_fmadd_ps(s.step[2 * j], _mm512_cvtepi32_ps(lo),
                                     _mm512_mul_ps(s.step[2 * j + 1], _mm512_cvtepi32_ps(hi)));
    return _mm512_fmadd_ps(t, _mm512_set1_ps(sx), acc);
  }
};

}  // namespace
}  // namespace ds::kernels
