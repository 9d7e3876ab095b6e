// PromptImage: content hash, decode + preprocess, and the image-pad expansion of a rendered prompt.
#include "vision/prompt_image.h"

#include <cstddef>

#include "cache/checksum64.h"
#include "util/random.h"
#include "vision/image_preprocessor.h"

namespace ds {

uint64_t image_content_hash(const RgbImage& image) {
  uint64_t state = checksum64(std::as_bytes(std::span(image.pixels)));
  state ^= static_cast<uint64_t>(image.height) * 0x9e3779b97f4a7c15ull;
  state = splitmix64(state);
  state ^= static_cast<uint64_t>(image.width) * 0xc2b2ae3d27d4eb4full;
  return splitmix64(state);
}

Result<PromptImage> prepare_image(const RgbImage& image, const PreprocessorConfig& config) {
  DS_ASSIGN_OR_RETURN(PreprocessedImage pre, preprocess_image(image, config));
  PromptImage out;
  out.content_hash = image_content_hash(image);
  out.grid = VisionGrid{pre.grid_t, pre.grid_h, pre.grid_w};
  out.pixel_values = std::make_shared<const std::vector<float>>(std::move(pre.pixel_values));
  return out;
}

Result<PromptImage> prepare_image(std::span<const uint8_t> bytes, const ImageLimits& limits,
                                  const PreprocessorConfig& config) {
  DS_ASSIGN_OR_RETURN(RgbImage image, decode_image(bytes, limits));
  return prepare_image(image, config);
}

Result<std::vector<int32_t>> expand_image_pads(std::span<const int32_t> ids, int32_t image_token_id,
                                               std::span<const PromptImage> images, int64_t merge_size) {
  std::vector<int32_t> out;
  out.reserve(ids.size());
  size_t image = 0;
  for (const int32_t id : ids) {
    if (id != image_token_id) {
      out.push_back(id);
      continue;
    }
    if (image == images.size())
      return Status::errorf("the prompt has more image placeholders than the ", images.size(),
                            " image(s) given (each image is rendered as one image-pad token)");
    out.insert(out.end(), static_cast<size_t>(image_token_count(images[image].grid, merge_size)), image_token_id);
    ++image;
  }
  if (image != images.size())
    return Status::errorf("expected one image placeholder per image (", images.size(), "), found ", image,
                          " in the rendered prompt");
  return out;
}

}  // namespace ds
