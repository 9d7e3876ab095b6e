// EXIF orientation: a bounds-checked walk of IFD0 of the TIFF structure (byte order from the
// header), and PIL's eight transposes.
#include "vision/exif_orientation.h"

namespace ds {
namespace {

constexpr uint16_t kOrientationTag = 0x0112;
constexpr uint16_t kTiffShort = 3;
constexpr uint16_t kTiffLong = 4;

class TiffReader {
 public:
  TiffReader(std::span<const uint8_t> bytes, bool big_endian) : bytes_(bytes), big_endian_(big_endian) {}
  bool has(uint64_t offset, uint64_t size) const { return offset <= bytes_.size() && size <= bytes_.size() - offset; }
  uint16_t u16(uint64_t offset) const {
    const uint8_t a = bytes_[offset], b = bytes_[offset + 1];
    return static_cast<uint16_t>(big_endian_ ? (a << 8) | b : (b << 8) | a);
  }
  uint32_t u32(uint64_t offset) const {
    const uint32_t hi = u16(offset), lo = u16(offset + 2);
    return big_endian_ ? (hi << 16) | lo : (lo << 16) | hi;
  }

 private:
  std::span<const uint8_t> bytes_;
  bool big_endian_;
};

}  // namespace

int exif_orientation(std::span<const uint8_t> tiff) {
  if (tiff.size() < 8) return 1;
  bool big_endian;
  if (tiff[0] == 'I' && tiff[1] == 'I' && tiff[2] == 42 && tiff[3] == 0) big_endian = false;
  else if (tiff[0] == 'M' && tiff[1] == 'M' && tiff[2] == 0 && tiff[3] == 42) big_endian = true;
  else return 1;
  const TiffReader r(tiff, big_endian);
  const uint64_t ifd = r.u32(4);
  if (!r.has(ifd, 2)) return 1;
  const uint16_t entries = r.u16(ifd);
  for (uint64_t i = 0; i < entries; ++i) {
    const uint64_t entry = ifd + 2 + 12 * i;
    if (!r.has(entry, 12)) return 1;
    if (r.u16(entry) != kOrientationTag) continue;
    const uint16_t type = r.u16(entry + 2);
    if (r.u32(entry + 4) != 1) return 1;  // a single value, as the tag is defined
    // A value of at most 4 bytes is stored in the entry itself, left-justified.
    const uint32_t value = type == kTiffShort ? r.u16(entry + 8) : type == kTiffLong ? r.u32(entry + 8) : 0;
    return value >= 1 && value <= 8 ? static_cast<int>(value) : 1;
  }
  return 1;
}

RgbImage apply_exif_orientation(RgbImage image, int orientation) {
  if (orientation < 2 || orientation > 8) return image;
  const int64_t H = image.height, W = image.width;
  const bool swaps_sides = orientation >= 5;
  RgbImage out;
  out.height = swaps_sides ? W : H;
  out.width = swaps_sides ? H : W;
  out.pixels.resize(image.pixels.size());
  for (int64_t y = 0; y < out.height; ++y) {
    for (int64_t x = 0; x < out.width; ++x) {
      int64_t sy = 0, sx = 0;  // the source pixel of output (y, x)
      switch (orientation) {
        case 2: sy = y, sx = W - 1 - x; break;          // mirror left-right
        case 3: sy = H - 1 - y, sx = W - 1 - x; break;  // rotate 180°
        case 4: sy = H - 1 - y, sx = x; break;          // mirror top-bottom
        case 5: sy = x, sx = y; break;                  // transpose
        case 6: sy = H - 1 - x, sx = y; break;          // rotate 90° clockwise
        case 7: sy = H - 1 - x, sx = W - 1 - y; break;  // transverse
        case 8: sy = x, sx = W - 1 - y; break;          // rotate 90° counter-clockwise
      }
      const uint8_t* from = image.row(sy) + 3 * sx;
      uint8_t* to = out.row(y) + 3 * x;
      to[0] = from[0], to[1] = from[1], to[2] = from[2];
    }
  }
  return out;
}

}  // namespace ds
