// decode_image: signature sniffing, the byte limit, dispatch to the format's decoder, orientation.
#include "vision/decode_image.h"

#include <cstring>

#include "vision/exif_orientation.h"
#include "vision/image_decoders.h"

namespace ds {

const char* image_format_name(ImageFormat format) {
  switch (format) {
    case ImageFormat::png: return "PNG";
    case ImageFormat::jpeg: return "JPEG";
    case ImageFormat::webp: return "WebP";
    case ImageFormat::gif: return "GIF";
  }
  return "?";
}

std::optional<ImageFormat> sniff_image_format(std::span<const uint8_t> bytes) {
  const auto starts_with = [&](const char* magic, size_t offset = 0) {
    const size_t n = std::strlen(magic);
    return bytes.size() >= offset + n && std::memcmp(bytes.data() + offset, magic, n) == 0;
  };
  if (starts_with("\x89PNG\r\n\x1a\n")) return ImageFormat::png;
  if (starts_with("\xff\xd8\xff")) return ImageFormat::jpeg;
  if (starts_with("RIFF") && starts_with("WEBP", 8)) return ImageFormat::webp;
  if (starts_with("GIF87a") || starts_with("GIF89a")) return ImageFormat::gif;
  return std::nullopt;
}

namespace image_decoders {

Status check_image_size(ImageFormat format, int64_t width, int64_t height, const ImageLimits& limits) {
  if (width <= 0 || height <= 0)
    return Status::errorf(image_format_name(format), " image: expected a width and height of at least 1, found ",
                          width, " x ", height);
  // Compared by division: width × height may not fit in 64 bits for hostile headers.
  if (width > limits.max_pixels / height)
    return Status::errorf(image_format_name(format), " image of ", width, " x ", height,
                          " pixels: expected at most ", limits.max_pixels, " pixels");
  return {};
}

int orientation_of_exif_block(std::span<const uint8_t> block) {
  static constexpr uint8_t kExifPrefix[] = {'E', 'x', 'i', 'f', 0, 0};
  if (block.size() >= sizeof(kExifPrefix) && std::memcmp(block.data(), kExifPrefix, sizeof(kExifPrefix)) == 0)
    block = block.subspan(sizeof(kExifPrefix));
  return exif_orientation(block);
}

}  // namespace image_decoders

Result<RgbImage> decode_image(std::span<const uint8_t> bytes, const ImageLimits& limits) {
  if (bytes.size() > limits.max_bytes)
    return Status::errorf("image of ", bytes.size(), " bytes: expected at most ", limits.max_bytes, " bytes");
  const std::optional<ImageFormat> format = sniff_image_format(bytes);
  if (!format)
    return Status::errorf("image: expected PNG, JPEG, WebP or GIF data, found ",
                          bytes.empty() ? std::string("no bytes") : str_cat(bytes.size(), " bytes of another kind"));
  Result<image_decoders::Decoded> decoded = Status::internal("unreachable");
  switch (*format) {
    case ImageFormat::png: decoded = image_decoders::decode_png(bytes, limits); break;
    case ImageFormat::jpeg: decoded = image_decoders::decode_jpeg(bytes, limits); break;
    case ImageFormat::webp: decoded = image_decoders::decode_webp(bytes, limits); break;
    case ImageFormat::gif: decoded = image_decoders::decode_gif(bytes, limits); break;
  }
  if (!decoded.ok()) return decoded.status();
  return apply_exif_orientation(std::move(decoded->image), decoded->orientation);
}

}  // namespace ds
