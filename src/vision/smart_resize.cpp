// smart_resize, line for line after transformers' models/qwen2_vl/image_processing_qwen2_vl.py.
#include "vision/smart_resize.h"

#include <algorithm>
#include <cmath>

namespace ds {

Result<ResizedSize> smart_resize(int64_t height, int64_t width, int64_t factor, int64_t min_pixels,
                                 int64_t max_pixels) {
  if (height < 1 || width < 1)
    return Status::errorf("image: expected a size of at least 1 x 1, found ", height, " x ", width);
  const double h = static_cast<double>(height), w = static_cast<double>(width), f = static_cast<double>(factor);
  const double aspect = std::max(h, w) / std::min(h, w);
  if (aspect > 200)
    return Status::errorf("image of ", height, " x ", width, ": expected an aspect ratio of at most 200, found ", aspect);
  // std::nearbyint rounds half to even in the default rounding mode, as Python's round does.
  int64_t h_bar = static_cast<int64_t>(std::nearbyint(h / f)) * factor;
  int64_t w_bar = static_cast<int64_t>(std::nearbyint(w / f)) * factor;
  if (h_bar * w_bar > max_pixels) {
    const double beta = std::sqrt(static_cast<double>(height * width) / static_cast<double>(max_pixels));
    h_bar = std::max(factor, static_cast<int64_t>(std::floor(h / beta / f)) * factor);
    w_bar = std::max(factor, static_cast<int64_t>(std::floor(w / beta / f)) * factor);
  } else if (h_bar * w_bar < min_pixels) {
    const double beta = std::sqrt(static_cast<double>(min_pixels) / static_cast<double>(height * width));
    h_bar = static_cast<int64_t>(std::ceil(h * beta / f)) * factor;
    w_bar = static_cast<int64_t>(std::ceil(w * beta / f)) * factor;
  }
  if (h_bar < 1 || w_bar < 1)
    return Status::errorf("image of ", height, " x ", width, ": expected a resized size of at least ", factor, " x ",
                          factor, ", found ", h_bar, " x ", w_bar, " (min_pixels is 0)");
  return ResizedSize{h_bar, w_bar};
}

}  // namespace ds
