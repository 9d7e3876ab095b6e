// The per-format decoders behind decode_image (one file each). Each returns the pixels as stored
// plus the EXIF orientation the file carries; decode_image turns them upright.
#pragma once

#include <span>

#include "util/status.h"
#include "vision/decode_image.h"

namespace ds::image_decoders {

struct Decoded {
  RgbImage image;
  int orientation = 1;  // EXIF tag 0x0112 (1 = upright; exif_orientation.h)
};

Result<Decoded> decode_png(std::span<const uint8_t> bytes, const ImageLimits& limits);
Result<Decoded> decode_jpeg(std::span<const uint8_t> bytes, const ImageLimits& limits);
Result<Decoded> decode_webp(std::span<const uint8_t> bytes, const ImageLimits& limits);
Result<Decoded> decode_gif(std::span<const uint8_t> bytes, const ImageLimits& limits);

// Refuses a width × height the limits do not allow (or an empty image), naming the format.
Status check_image_size(ImageFormat format, int64_t width, int64_t height, const ImageLimits& limits);

// The orientation of an EXIF block as files store it: the TIFF structure, optionally behind
// "Exif\0\0" (some writers put that prefix into PNG eXIf and WebP EXIF chunks too; PIL skips it).
int orientation_of_exif_block(std::span<const uint8_t> block);

}  // namespace ds::image_decoders
