// Activations quantised to int8 for the int8 × int8 matmul (Q8_0-style): each row (token) on its own,
// symmetric per group of kInt8ScaleGroup inputs, so a row's codes never depend on other rows, the
// batch or the thread count.
//
// Per group: amax = max |x|; scale = amax / 127; q = round-to-nearest-even(x · (127 / amax)) (0 when
// amax is 0), |q| ≤ 127 because amax · fl(127 / amax) < 127.5. Every step is one correctly rounded
// IEEE operation (no fused ones), so the scalar, AVX2 and AVX-512 versions produce the same bits.
// The int8 matmul then computes, per output and per group g in order,
//   acc = fma(float(Σ_i q_w · q_x), scale_w · scale_x, acc)          (acc starts at +0)
// where the integer dot is exact (|Σ| ≤ 127 · 127 · 32 < 2^24, so float() is exact too).
//

#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/formats/int8_panels/int8_panels.h"

namespace ds {

// Weights whose outputs feed a long recurrence (the Gated DeltaNet projections) can ask for 16-bit
// activations instead (TensorView::activation_planes = 2): q16 = round(x · (32639 / amax)), scale =
// amax / 32639, split exactly into two signed-byte planes q16 = 256 · hi + lo (hi = (q16 + 128) >> 8,
// lo in [−128, 127]; 32639 = 127 · 257 keeps |hi| ≤ 127), so the same `vpdpbusd` kernel runs twice
// and combines 256 · dot(hi) + dot(lo) = Σ q_w · q16 exactly in int32 (|Σ| < 2^28; float() of it then
// rounds to nearest, the same in every version). Twice the multiply work, 1/256 of the rounding error.
inline constexpr float kInt8Levels = 127.0f, kInt16Levels = 32639.0f;

// One call's quantised activations, rows `planes · groups · 32` bytes apart: plane 0 holds q (or hi),
// plane 1 lo; groups padded with zeros past k. `offset_sum` = −128 · Σ q over a group and plane:
// `vpdpbusd` multiplies the weights stored as q + 128, which adds 128 · Σ q_x per group; starting the
// integer sum at −128 · Σ q_x removes it exactly.
struct Int8Activations {
  int8_t* q = nullptr;            // [m, planes, groups · 32]
  float* scales = nullptr;        // [m, groups]
  int32_t* offset_sum = nullptr;  // [m, planes, groups]
  int64_t groups = 0;
  int64_t planes = 1;             // 1: int8 activations; 2: 16-bit ones as hi / lo bytes
};

// One buffer holding m rows' activations: q [m, planes, groups · 32] int8, then scales [m, groups]
// fp32, then offset sums [m, planes, groups] int32 (each part 4-byte aligned: 32 bytes per group).
inline uint64_t int8_activation_bytes(int64_t m, int64_t k, int64_t planes) {
  const int64_t groups = int8_groups(k);
  return static_cast<uint64_t>(m * planes * groups * kInt8ScaleGroup + 4 * m * groups + 4 * m * planes * groups);
}
inline Int8Activations int8_activations_in(std::byte* buffer, int64_t m, int64_t k, int64_t planes) {
  const int64_t groups = int8_groups(k), q_bytes = m * planes * groups * kInt8ScaleGroup;
  return Int8Activations{reinterpret_cast<int8_t*>(buffer), reinterpret_cast<float*>(buffer + q_bytes),
                         reinterpret_cast<int32_t*>(buffer + q_bytes + 4 * m * groups), groups, planes};
}

// x86's float → int32 conversion (cvtps2dq), which the ISA versions use: round to nearest even, and
// NaN or a value outside int32 gives INT32_MIN. Spelled out because the C++ cast is undefined there,
// and a fuzzed or broken checkpoint can make activations non-finite.
inline int32_t round_to_int32_as_x86(float v) {
  const float rounded = std::nearbyint(v);
  return rounded >= -2147483648.0f && rounded < 2147483648.0f ? static_cast<int32_t>(rounded) : INT32_MIN;
}

// Scalar definition (the reference; the ISA versions must match it bit for bit): quantises row `r`
// (x [k]) into `a`.
inline void quantize_activation_row_scalar(const float* x, int64_t k, int64_t r, const Int8Activations& a) {
  const int64_t stride = a.groups * kInt8ScaleGroup;
  int8_t* q = a.q + r * a.planes * stride;
  const float levels = a.planes == 2 ? kInt16Levels : kInt8Levels;
  for (int64_t g = 0; g < a.groups; ++g) {
    const int64_t first = g * kInt8ScaleGroup, count = std::min<int64_t>(kInt8ScaleGroup, k - first);
    float amax = 0.0f;
    for (int64_t i = 0; i < count; ++i) amax = std::max(amax, std::fabs(x[first + i]));
    const float inverse = amax > 0.0f ? levels / amax : 0.0f;
    int64_t sum_hi = 0, sum_lo = 0;  // int64: non-finite rows would overflow int32 (the SIMD sums wrap)
    for (int64_t i = 0; i < kInt8ScaleGroup; ++i) {
      const auto value = i < count ? round_to_int32_as_x86(x[first + i] * inverse) : 0;
      if (a.planes == 1) {
        q[first + i] = static_cast<int8_t>(value);
        sum_hi += value;
      } else {
        const int32_t hi = static_cast<int32_t>((int64_t{value} + 128) >> 8), lo = static_cast<int32_t>(value - int64_t{256} * hi);
        q[first + i] = static_cast<int8_t>(hi);
        q[stride + first + i] = static_cast<int8_t>(lo);
        sum_hi += hi;
        sum_lo += lo;
      }
    }
    a.scales[r * a.groups + g] = amax / levels;
    a.offset_sum[(r * a.planes) * a.groups + g] = static_cast<int32_t>(-128 * sum_hi);  // modulo 2^32
    if (a.planes == 2) a.offset_sum[(r * a.planes + 1) * a.groups + g] = static_cast<int32_t>(-128 * sum_lo);
  }
}

}  // namespace ds
