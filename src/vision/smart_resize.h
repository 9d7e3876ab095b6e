// HF's smart_resize (Qwen2VLImageProcessor): the size an image is resized to before patching —
// both sides multiples of `factor` (patch × merge), the area within [min_pixels, max_pixels], the
// aspect ratio kept as well as that allows. Python's arithmetic is kept: `round` rounds half to
// even (22.5 → 22), the divisions are doubles in the same order.
#pragma once

#include <cstdint>

#include "util/status.h"

namespace ds {

struct ResizedSize {
  int64_t height = 0;
  int64_t width = 0;
};

// Refuses an aspect ratio above 200 (HF raises) and a result with a side of 0.
Result<ResizedSize> smart_resize(int64_t height, int64_t width, int64_t factor, int64_t min_pixels, int64_t max_pixels);

}  // namespace ds
