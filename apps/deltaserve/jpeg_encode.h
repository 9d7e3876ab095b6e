// A JPEG file of an RGB image, through libjpeg-turbo's compressor: `bench --images` times decoding
// the bytes a client sends (a photo is the common case), not only what follows it.
#pragma once

#include <cstdint>
#include <vector>

#include "util/status.h"
#include "vision/rgb_image.h"

namespace ds::app {

// Baseline JPEG, 4:2:0, `quality` 1..100 (libjpeg's scale; cameras and phones write ~90).
Result<std::vector<uint8_t>> encode_jpeg(const RgbImage& image, int quality);

}  // namespace ds::app
