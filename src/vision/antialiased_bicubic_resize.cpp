// torch's uint8 antialiased bicubic (aten/src/ATen/native/cpu/UpSampleKernel.cpp:
// HelperInterpBase::_compute_indices_min_size_weights_aa, _compute_index_ranges_int16_weights,
// HelperInterpCubic::aa_filter; the passes of UpSampleKernelAVXAntialias.h). Built with
// -ffp-contract=off: the weights are doubles whose every rounding must be torch's.
#include "vision/antialiased_bicubic_resize.h"

#include <algorithm>
#include <cmath>

#include "util/check.h"

namespace ds {
namespace {

// Keys' cubic convolution with a = −0.5 (PIL's), in torch's expression order (UpSample.h).
double cubic_filter(double x) {
  constexpr double a = -0.5;
  x = std::abs(x);
  if (x < 1.0) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2.0) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

constexpr double kCubicInterpSize = 4;  // taps of the unstretched kernel

// One pass over `lines` lines of `samples_out` outputs each: output (line, i) of channel c sums
// input (line, first[i] + j) with the filter's weights, inputs `step` elements apart along the axis
// and lines `line_stride` elements apart (3 channels interleaved).
void filter_pass(const uint8_t* in, uint8_t* out, const ResizeFilter& f, int64_t lines, int64_t samples_out,
                 int64_t in_line_stride, int64_t in_step, int64_t out_line_stride, int64_t out_step) {
  const int32_t rounding = int32_t{1} << (f.precision - 1);
  for (int64_t line = 0; line < lines; ++line) {
    for (int64_t i = 0; i < samples_out; ++i) {
      const int16_t* w = f.weights.data() + i * f.max_taps;
      const uint8_t* src = in + line * in_line_stride + f.first[i] * in_step;
      for (int64_t c = 0; c < 3; ++c) {
        int32_t acc = rounding;
        for (int64_t j = 0; j < f.taps[i]; ++j) acc += int32_t{w[j]} * src[j * in_step + c];
        const int32_t value = acc >> f.precision;  // arithmetic shift: floor, as the SIMD kernel's srai
        out[line * out_line_stride + i * out_step + c] = static_cast<uint8_t>(std::clamp(value, 0, 255));
      }
    }
  }
}

}  // namespace

ResizeFilter antialiased_bicubic_filter(int64_t in, int64_t out) {
  DS_CHECK(in > 0 && out > 0, "resize ", in, " -> ", out);
  const double scale = static_cast<double>(in) / static_cast<double>(out);
  const double support = scale >= 1.0 ? (kCubicInterpSize * 0.5) * scale : kCubicInterpSize * 0.5;
  const double invscale = scale >= 1.0 ? 1.0 / scale : 1.0;
  ResizeFilter f;
  f.max_taps = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
  f.first.resize(static_cast<size_t>(out));
  f.taps.resize(static_cast<size_t>(out));
  std::vector<double> weights(static_cast<size_t>(out * f.max_taps), 0.0);  // [out, max_taps]
  double max_weight = 0.0;
  for (int64_t i = 0; i < out; ++i) {
    const double center = scale * (static_cast<double>(i) + 0.5);
    const int64_t xmin = std::max(static_cast<int64_t>(center - support + 0.5), int64_t{0});
    // Rounding can make the span one longer than max_taps; torch clips it.
    const int64_t xsize = std::clamp(std::min(static_cast<int64_t>(center + support + 0.5), in) - xmin, int64_t{0},
                                     f.max_taps);
    double* w = weights.data() + i * f.max_taps;
    double total = 0.0;
    for (int64_t j = 0; j < xsize; ++j) {
      w[j] = cubic_filter((static_cast<double>(j + xmin) - center + 0.5) * invscale);
      total += w[j];
    }
    if (total != 0.0)
      for (int64_t j = 0; j < xsize; ++j) {
        w[j] /= total;
        max_weight = std::max(max_weight, w[j]);
      }
    f.first[static_cast<size_t>(i)] = xmin;
    f.taps[static_cast<size_t>(i)] = xsize;
  }
  // The most fractional bits that keep 2 × the largest weight below 2^15 (at most 22).
  for (f.precision = 0; f.precision < 22; ++f.precision)
    if (static_cast<int>(0.5 + max_weight * (1 << (f.precision + 1))) >= (1 << 15)) break;
  f.weights.resize(weights.size());
  for (size_t k = 0; k < weights.size(); ++k) {
    const double v = weights[k] * (1 << f.precision);
    f.weights[k] = static_cast<int16_t>(v < 0 ? static_cast<int>(-0.5 + v) : static_cast<int>(0.5 + v));
  }
  return f;
}

RgbImage antialiased_bicubic_resize(const RgbImage& image, int64_t height, int64_t width) {
  DS_CHECK(height > 0 && width > 0, "resize to ", height, " x ", width);
  if (height == image.height && width == image.width) return image;
  // Width pass (skipped when the width stays), then height pass on its uint8 output.
  RgbImage wide;
  const RgbImage* source = &image;
  if (width != image.width) {
    const ResizeFilter f = antialiased_bicubic_filter(image.width, width);
    wide.height = image.height;
    wide.width = width;
    wide.pixels.resize(static_cast<size_t>(wide.height * width * 3));
    filter_pass(image.pixels.data(), wide.pixels.data(), f, image.height, width, image.width * 3, 3, width * 3, 3);
    source = &wide;
  }
  if (height == source->height) return wide;
  const ResizeFilter f = antialiased_bicubic_filter(source->height, height);
  RgbImage out;
  out.height = height;
  out.width = width;
  out.pixels.resize(static_cast<size_t>(height * width * 3));
  // Columns are the lines here: a line is one x position (stride 3), samples are rows.
  filter_pass(source->pixels.data(), out.pixels.data(), f, width, height, 3, width * 3, 3, width * 3);
  return out;
}

}  // namespace ds
