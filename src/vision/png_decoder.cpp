// PNG through libspng (image_decoders.h; why libspng: docs/vision.md). 8-bit output as PIL gives
// it: palettes expanded (transparency ignored), grey replicated, alpha dropped, gamma and sBIT
// ignored; 16-bit samples keep their high byte, except 16-bit grey without alpha, which PIL opens
// as "I;16" and clips to 255 when converting to RGB.
#include <spng.h>

#include <memory>

#include "vision/image_decoders.h"

namespace ds::image_decoders {
namespace {

constexpr uint8_t kGreyColourType = 0;
// Bounds on ancillary chunks (text, ICC profiles, EXIF): one chunk and all of them together.
constexpr size_t kMaxChunkBytes = size_t{8} << 20;
constexpr size_t kMaxChunkCacheBytes = size_t{16} << 20;

struct SpngContextDeleter {
  void operator()(spng_ctx* ctx) const { spng_ctx_free(ctx); }
};

Status spng_error(const char* what, int code) {
  return Status::errorf("PNG image: ", what, " failed: ", spng_strerror(code));
}

}  // namespace

Result<Decoded> decode_png(std::span<const uint8_t> bytes, const ImageLimits& limits) {
  const std::unique_ptr<spng_ctx, SpngContextDeleter> ctx(spng_ctx_new(0));
  if (!ctx) return Status::internal("PNG image: could not create a libspng context");
  spng_ctx* c = ctx.get();
  spng_set_chunk_limits(c, kMaxChunkBytes, kMaxChunkCacheBytes);
  if (int rc = spng_set_png_buffer(c, bytes.data(), bytes.size())) return spng_error("reading", rc);
  spng_ihdr ihdr{};
  if (int rc = spng_get_ihdr(c, &ihdr)) return spng_error("reading the header", rc);
  DS_TRY(check_image_size(ImageFormat::png, ihdr.width, ihdr.height, limits));

  Decoded out;
  // After decoding, so an eXIf chunk behind the image data is seen too.
  const auto read_orientation = [&] {
    spng_exif exif{};
    if (spng_get_exif(c, &exif) == 0 && exif.data != nullptr)
      out.orientation = orientation_of_exif_block({reinterpret_cast<const uint8_t*>(exif.data), exif.length});
  };
  RgbImage& image = out.image;
  image.height = ihdr.height;
  image.width = ihdr.width;
  const size_t pixels = static_cast<size_t>(image.height) * static_cast<size_t>(image.width);
  image.pixels.resize(pixels * 3);
  if (ihdr.bit_depth != 16) {
    size_t size = 0;
    if (int rc = spng_decoded_image_size(c, SPNG_FMT_RGB8, &size)) return spng_error("sizing the image", rc);
    if (size != image.pixels.size()) return Status::internal("PNG image: libspng sized ", size, " bytes for ", pixels, " pixels");
    if (int rc = spng_decode_image(c, image.pixels.data(), size, SPNG_FMT_RGB8, 0)) return spng_error("decoding", rc);
    read_orientation();
    return out;
  }
  std::vector<uint16_t> wide(pixels * 4);  // [height, width, RGBA], host-endian
  if (int rc = spng_decode_image(c, wide.data(), wide.size() * 2, SPNG_FMT_RGBA16, 0)) return spng_error("decoding", rc);
  const bool clip = ihdr.color_type == kGreyColourType;
  for (size_t i = 0; i < pixels; ++i)
    for (size_t ch = 0; ch < 3; ++ch) {
      const uint16_t v = wide[4 * i + ch];
      image.pixels[3 * i + ch] = static_cast<uint8_t>(clip ? (v > 255 ? 255 : v) : v >> 8);
    }
  read_orientation();
  return out;
}

}  // namespace ds::image_decoders
