// The resize of HF's default image-processor backend: torchvision's `resize(uint8 image, (h, w),
// BICUBIC, antialias=True)`, which on CPU runs torch's native uint8 kernel (`_upsample_bicubic2d_aa`,
// Pillow-SIMD's algorithm): Keys cubic a = −0.5 stretched by the scale when shrinking, weights in
// double quantised to int16 at a per-axis precision, then integer passes — width first, then
// height — each rounding and clamping to uint8. Reproduced here operation for operation, so the
// output is bit-identical (numbers and sources: docs/vision.md).
#pragma once

#include <cstdint>
#include <vector>

#include "vision/rgb_image.h"

namespace ds {

// One axis's filter: output i reads input [first[i], first[i] + taps[i]) with int16 weights of
// `precision` fractional bits (weights[i·max_taps + j]).
struct ResizeFilter {
  std::vector<int64_t> first;    // [out]
  std::vector<int64_t> taps;     // [out]
  std::vector<int16_t> weights;  // [out, max_taps]
  int64_t max_taps = 0;
  int precision = 0;
};

// The filter torch builds for resizing an axis of `in` samples to `out`.
ResizeFilter antialiased_bicubic_filter(int64_t in, int64_t out);

// `image` resized to height × width (both ≥ 1); the same image when the size does not change.
RgbImage antialiased_bicubic_resize(const RgbImage& image, int64_t height, int64_t width);

}  // namespace ds
