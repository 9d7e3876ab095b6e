// An image as the vision tower takes it, exactly as HF's Qwen2VLImageProcessor (torchvision
// backend) gives it: smart_resize, the antialiased bicubic resize, rescale + normalise, and the
// patch rows of `pixel_values` in 2 × 2-merge order with `image_grid_thw`.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "util/status.h"
#include "vision/preprocessor_config.h"
#include "vision/rgb_image.h"

namespace ds {

struct PreprocessedImage {
  int64_t grid_t = 1;  // one image = one temporal patch of `temporal_patch_size` identical frames
  int64_t grid_h = 0;  // patch rows (resized height / patch_size)
  int64_t grid_w = 0;  // patch columns
  // [grid_t·grid_h·grid_w, 3·temporal_patch_size·patch_size²]: row k is the patch (t, 2·br + ir,
  // 2·bc + ic) for k = ((t·(gh/m) + br)·(gw/m) + bc)·m² + ir·m + ic (m = merge_size); column
  // ((c·T + τ)·P + py)·P + px holds channel c of frame τ at pixel (py, px) of the patch.
  std::vector<float> pixel_values;

  int64_t patches() const { return grid_t * grid_h * grid_w; }
};

// Refuses images smart_resize refuses, and (with do_resize false) sides that are not multiples of
// patch_size · merge_size.
Result<PreprocessedImage> preprocess_image(const RgbImage& image, const PreprocessorConfig& config);

// The normalised value of every 8-bit sample per channel, in fp32 as torch computes it
// (rescale + normalise fused: (x − mean/rescale) / (std/rescale)). [3][256].
std::array<std::array<float, 256>, 3> normalisation_table(const PreprocessorConfig& config);

}  // namespace ds
