// PromptImage: one image of a request, decoded and preprocessed — what the engine needs to lay its
// tokens out in the prompt, run it through the tower (once per content) and key the prefix cache.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "util/status.h"
#include "vision/decode_image.h"
#include "vision/preprocessor_config.h"
#include "vision/rgb_image.h"
#include "vision/vision_positions.h"

namespace ds {

struct PromptImage {
  // Of the decoded pixels and their size: equal images share the tower's output and prefix-cache
  // entries; different ones never do (the preprocessing is the checkpoint's, fixed for a server).
  uint64_t content_hash = 0;
  VisionGrid grid;  // image_grid_thw
  // [grid.patches(), 3·T·P²] (image_preprocessor.h): 24 bytes per resized pixel (a 4096² image: 384
  // MiB), shared by the copies a request's n choices hold.
  std::shared_ptr<const std::vector<float>> pixel_values;
};

uint64_t image_content_hash(const RgbImage& image);

Result<PromptImage> prepare_image(const RgbImage& image, const PreprocessorConfig& config);
// Decodes (within `limits`) and preprocesses an encoded file.
Result<PromptImage> prepare_image(std::span<const uint8_t> bytes, const ImageLimits& limits,
                                  const PreprocessorConfig& config);

// The tokens one image takes in the prompt: its merged grid, t·h·w / merge².
inline int64_t image_token_count(const VisionGrid& grid, int64_t merge_size) {
  return grid.patches() / (merge_size * merge_size);
}

// What a chat template renders for each image — one image-pad token — expanded to the image's token
// count, as HF's processor expands `<|image_pad|>`. Refuses a count of pads other than images.size().
Result<std::vector<int32_t>> expand_image_pads(std::span<const int32_t> ids, int32_t image_token_id,
                                               std::span<const PromptImage> images, int64_t merge_size);

}  // namespace ds
