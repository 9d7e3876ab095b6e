// The body of the image-decoder fuzz targets (fuzz_{png,jpeg,webp,gif}_decode.cpp): one decoder on
// the whole input, then the orientation step decode_image applies. An accepted image is whole and
// within the limits; a refusal always says why. A pixel bound of 1 Mpx keeps each input fast while
// still reaching every code path (the limit check itself is one of them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "vision/exif_orientation.h"
#include "vision/image_decoders.h"

namespace ds::fuzz {

inline constexpr ImageLimits kFuzzImageLimits{uint64_t{1} << 20, int64_t{1} << 20};

template <typename Decoder>
int decode_image_input(Decoder decoder, const uint8_t* data, size_t size) {
  const auto decoded = decoder(std::span<const uint8_t>(data, size), kFuzzImageLimits);
  if (!decoded.ok()) {
    if (decoded.status().message().empty()) __builtin_trap();
    return 0;
  }
  const RgbImage image = apply_exif_orientation(decoded->image, decoded->orientation);
  if (image.height < 1 || image.width < 1 || image.height * image.width > kFuzzImageLimits.max_pixels) __builtin_trap();
  if (image.pixels.size() != static_cast<size_t>(image.height * image.width * 3)) __builtin_trap();
  if (image.height * image.width != decoded->image.height * decoded->image.width) __builtin_trap();
  return 0;
}

}  // namespace ds::fuzz
