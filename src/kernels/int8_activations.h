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
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "io/tensor_view.h"

namespace ds {

// One call's quantised activations, rows `stride` bytes apart (groups · 32, the tail group padded with
// zeros). `offset_sum` = −128 · Σ q over a group: `vpdpbusd` multiplies the weights stored as q + 128,
// which adds 128 · Σ q_x per group; starting the integer sum at −128 · Σ q_x removes it exactly.
struct Int8Activations {
  int8_t* q = nullptr;           // [m, groups · 32]
  float* scales = nullptr;       // [m, groups]
  int32_t* offset_sum = nullptr;  // [m, groups]
  int64_t groups = 0;
};

// Scalar definition (the reference; the ISA versions must match it bit for bit): quantises row `r`
// (x [k]) into `a`.
inline void quantize_activation_row_scalar(const float* x, int64_t k, int64_t r, const Int8Activations& a) {
  int8_t* q = a.q + r * a.groups * kInt8ScaleGroup;
  for (int64_t g = 0; g < a.groups; ++g) {
    const int64_t first = g * kInt8ScaleGroup, count = std::min<int64_t>(kInt8ScaleGroup, k - first);
    float amax = 0.0f;
    for (int64_t i = 0; i < count; ++i) amax = std::max(amax, std::fabs(x[first + i]));
    const float inverse = amax > 0.0f ? 127.0f / amax : 0.0f;
    int32_t sum = 0;
    for (int64_t i = 0; i < kInt8ScaleGroup; ++i) {
      const auto value = i < count ? static_cast<int32_t>(std::nearbyint(x[first + i] * inverse)) : 0;
      q[first + i] = static_cast<int8_t>(value);
      sum += value;
    }
    a.scales[r * a.groups + g] = amax / 127.0f;
    a.offset_sum[r * a.groups + g] = -128 * sum;
  }
}

}  // namespace ds
