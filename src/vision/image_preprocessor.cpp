// preprocess_image: HF Qwen2VLImageProcessor._preprocess (torchvision backend) for one image —
// resize (smart_resize + antialiased bicubic), rescale_and_normalize, patchify.
#include "vision/image_preprocessor.h"

#include "vision/antialiased_bicubic_resize.h"
#include "vision/smart_resize.h"

namespace ds {

std::array<std::array<float, 256>, 3> normalisation_table(const PreprocessorConfig& config) {
  std::array<std::array<float, 256>, 3> table{};
  // torch: mean' = tensor(mean, fp32) * (1 / rescale_factor), the double scalar taken as fp32.
  const float inverse_rescale = static_cast<float>(1.0 / config.rescale_factor);
  const float rescale = static_cast<float>(config.rescale_factor);
  for (size_t c = 0; c < 3; ++c) {
    const float mean = config.do_rescale ? config.image_mean[c] * inverse_rescale : config.image_mean[c];
    const float std = config.do_rescale ? config.image_std[c] * inverse_rescale : config.image_std[c];
    for (int x = 0; x < 256; ++x) {
      const float value = static_cast<float>(x);
      table[c][static_cast<size_t>(x)] = config.do_normalize ? (value - mean) / std : value * rescale;
    }
  }
  return table;
}

Result<PreprocessedImage> preprocess_image(const RgbImage& image, const PreprocessorConfig& config) {
  const int64_t P = config.patch_size, T = config.temporal_patch_size, m = config.merge_size;
  RgbImage resized_storage;
  const RgbImage* resized = &image;
  if (config.do_resize) {
    DS_ASSIGN_OR_RETURN(const ResizedSize size, smart_resize(image.height, image.width, config.resize_factor(),
                                                             config.min_pixels, config.max_pixels));
    resized_storage = antialiased_bicubic_resize(image, size.height, size.width);
    resized = &resized_storage;
  } else if (image.height % config.resize_factor() != 0 || image.width % config.resize_factor() != 0) {
    return Status::errorf("image of ", image.height, " x ", image.width, ": with do_resize false, expected sides that are ",
                          "multiples of patch_size x merge_size = ", config.resize_factor());
  }
  PreprocessedImage out;
  out.grid_h = resized->height / P;
  out.grid_w = resized->width / P;
  const int64_t features = config.patch_features();
  out.pixel_values.resize(static_cast<size_t>(out.patches() * features));
  const auto table = normalisation_table(config);
  const int64_t blocks_w = out.grid_w / m;
  for (int64_t k = 0; k < out.patches(); ++k) {
    const int64_t ic = k % m, ir = (k / m) % m, bc = (k / (m * m)) % blocks_w, br = k / (m * m * blocks_w);
    const int64_t row = br * m + ir, col = bc * m + ic;
    float* dst = out.pixel_values.data() + k * features;
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t py = 0; py < P; ++py) {
        const uint8_t* src = resized->row(row * P + py) + col * P * 3 + c;
        float* frame0 = dst + (c * T * P + py) * P;
        for (int64_t px = 0; px < P; ++px) frame0[px] = table[static_cast<size_t>(c)][src[3 * px]];
        // The single frame is repeated to fill the temporal patch (HF pads by the last frame).
        for (int64_t tau = 1; tau < T; ++tau)
          std::copy(frame0, frame0 + P, dst + ((c * T + tau) * P + py) * P);
      }
  }
  return out;
}

}  // namespace ds
