// portable_exp: e^x in fp32 from +, −, × and integer bit operations only, so that GCC vectorises the
// loops that call it (std::exp stays a scalar libm call per element: SiLU alone was ~3.5% of a
// 2B prefill) and every build — the reference and each ISA's portable kernels, all compiled with
// -ffp-contract=off — computes the same bits.
//
// Cody–Waite reduction x = n·ln2 + r, |r| ≤ ln2/2 (ln2 split in a part exact in n·hi and a tail),
// then the degree-7 Taylor polynomial of e^r in Horner form (truncation < 2e-8 relative), scaled by
// 2^n built in the exponent bits. Against std::exp: ≤ 1 ulp over [ln FLT_MIN, 88.37] (tested).
// Below ln FLT_MIN (−87.34) the result is 0 instead of a subnormal (softmax weights < 1.2e-38 beside
// the max's 1, SiLU / sigmoid at −87: the same values to fp32 precision); above 88.37, where 2^n
// would leave the normal range, inputs are clamped: ~2.4e38 instead of up to 3.4e38 or inf (SiLU and
// sigmoid divide by 1 + e^x there: the same values to fp32 precision). NaN stays NaN.
#pragma once

#include <cstdint>
#include <cstring>

namespace ds {

inline float portable_exp(float x) {
  constexpr float kMin = -87.33654f, kMax = 88.37f;  // n = −126 … 127: 2^n stays a normal float
  const float input = x;
  x = x < kMin ? kMin : x;  // comparisons with NaN are false: NaN passes through both
  x = x > kMax ? kMax : x;
  // n = round(x / ln2) by the shifter 1.5·2^23: t's low mantissa bits hold n (|n| ≤ 128).
  constexpr float kShifter = 12582912.0f;
  const float t = x * 1.44269504088896341f + kShifter;
  const float n = t - kShifter;
  const float r = (x - n * 0.693145751953125f) - n * 1.42860682030941723e-6f;  // ln2 = hi + lo, n·hi exact
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  uint32_t t_bits, scale_bits;
  std::memcpy(&t_bits, &t, 4);
  scale_bits = (t_bits - 0x4B400000u + 127u) << 23;  // 2^n as a float: biased exponent n + 127
  float scale;
  std::memcpy(&scale, &scale_bits, 4);
  return input < kMin ? 0.0f : p * scale;
}

}  // namespace ds
