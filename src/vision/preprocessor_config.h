// preprocessor_config.json of a Qwen3.5 / Qwen3.6 checkpoint: the image processor's settings, read
// key by key as HF reads them. A key the file lacks takes the class default of HF's
// Qwen2VLImageProcessor — which are Qwen2-VL's (patch 14, CLIP mean / std), not Qwen3.5's: the
// released files set every key that differs, so the file, not a default, decides the model's input.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "util/status.h"

namespace ds {

struct PreprocessorConfig {
  int64_t min_pixels = 56 * 56;           // size.shortest_edge (or a top-level min_pixels, which wins)
  int64_t max_pixels = 28 * 28 * 1280;    // size.longest_edge (or max_pixels)
  int64_t patch_size = 14;
  int64_t temporal_patch_size = 2;
  int64_t merge_size = 2;
  bool do_resize = true;
  bool do_rescale = true;
  bool do_normalize = true;
  double rescale_factor = 1.0 / 255.0;
  // As torch holds them: fp32 (torch.tensor of the JSON's doubles).
  std::array<float, 3> image_mean = {0.48145466f, 0.4578275f, 0.40821073f};
  std::array<float, 3> image_std = {0.26862954f, 0.26130258f, 0.27577711f};

  int64_t resize_factor() const { return patch_size * merge_size; }  // smart_resize's factor
  int64_t patch_features() const { return 3 * temporal_patch_size * patch_size * patch_size; }  // a pixel_values row
};

// Parses preprocessor_config.json text; `source` labels errors. Refuses what this engine does not
// reproduce (another processor type, a resample other than bicubic, do_convert_rgb false) by name.
Result<PreprocessorConfig> parse_preprocessor_config(const std::string& text,
                                                     const std::string& source = "preprocessor_config.json");
// Reads DIR/preprocessor_config.json (an error when the file is missing).
Result<PreprocessorConfig> load_preprocessor_config(const std::string& dir);

}  // namespace ds
