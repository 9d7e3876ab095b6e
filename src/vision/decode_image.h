// Image decoding for the vision input: PNG, JPEG, WebP and GIF (first frame) from untrusted bytes
// (request bodies, local files) into 8-bit RGB, EXIF orientation applied and alpha dropped — what
// HF's `load_image` (PIL open, `ImageOps.exif_transpose`, `convert("RGB")`) gives its processor.
// Every failure is a Status that says what was expected and what was found; no input crashes.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "util/status.h"
#include "vision/rgb_image.h"

namespace ds {

enum class ImageFormat : uint8_t { png, jpeg, webp, gif };
const char* image_format_name(ImageFormat format);  // "PNG", "JPEG", "WebP", "GIF"

// Bounds on one image, checked before the decoder allocates its pixels (the header's size).
struct ImageLimits {
  uint64_t max_bytes = uint64_t{32} << 20;   // the encoded file
  int64_t max_pixels = int64_t{8192} * 8192;  // width × height as stored (and of a GIF's canvas)
};

// The format named by the file's first bytes (signature), or nullopt.
std::optional<ImageFormat> sniff_image_format(std::span<const uint8_t> bytes);

Result<RgbImage> decode_image(std::span<const uint8_t> bytes, const ImageLimits& limits = {});

}  // namespace ds
