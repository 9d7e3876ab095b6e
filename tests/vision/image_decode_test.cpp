// Decoding against HF's load_image (PIL open, exif_transpose, convert RGB) on the fixture images,
// and every refusal: limits, unknown formats, truncated and corrupt files.
#include <gtest/gtest.h>

#include <functional>

#include "vision/decode_image.h"
#include "vision/exif_orientation.h"
#include "vision_fixture.h"

namespace ds {
namespace {

using test::kVisionImages;
using test::read_image_file;

// Pixels equal to HF's, or the count and worst difference of those that are not.
void expect_decoded_as_hf(const std::string& name, const test::VisionReference& ref) {
  const Result<RgbImage> image = decode_image(read_image_file(name));
  ASSERT_TRUE(image.ok()) << name << ": " << image.status().message();
  const std::vector<int64_t> shape = ref.shape(name + ".decoded");
  ASSERT_EQ(shape.size(), 3u);
  ASSERT_EQ(image->height, shape[0]) << name;
  ASSERT_EQ(image->width, shape[1]) << name;
  const std::vector<uint8_t> want = ref.values<uint8_t>(name + ".decoded");
  ASSERT_EQ(image->pixels.size(), want.size());
  int64_t differing = 0, worst = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (image->pixels[i] != want[i]) {
      ++differing;
      worst = std::max<int64_t>(worst, std::abs(int{image->pixels[i]} - int{want[i]}));
    }
  EXPECT_EQ(differing, 0) << name << ": " << differing << " of " << want.size() << " samples differ, by up to " << worst;
}

TEST(ImageDecode, EveryFixtureImageDecodesToHfsPixels) {
  const test::VisionReference ref;
  for (const std::string& name : kVisionImages) expect_decoded_as_hf(name, ref);
}

TEST(ImageDecode, EveryExifOrientationTurnsThePixelsAsPilDoes) {
  const test::VisionReference ref;
  for (int v = 1; v <= 8; ++v) expect_decoded_as_hf("orientation" + std::to_string(v) + "_5x7.png", ref);
}

TEST(ImageDecode, ColourTypesBitDepthsAndContainerVariantsDecodeAsPilDoes) {
  const test::VisionReference ref;
  for (const char* name : {"palette_trns.png", "gray_alpha.png", "rgb16.png", "rgba16.png", "gray16.png",
                           "progressive.jpg", "gray.jpg", "subsampling444.jpg", "subsampling422.jpg", "exif3.webp",
                           "animated.webp", "exif8.jpg", "transparent.gif"})
    expect_decoded_as_hf(std::string("decode/") + name, ref);
}

TEST(ImageDecode, RefusesCmykJpegByName) {
  EXPECT_ERROR_CONTAINS(decode_image(read_image_file("decode/cmyk.jpg")),
                        "JPEG image: expected greyscale, YCbCr or RGB colour, found CMYK (convert it to RGB first)");
}

TEST(ImageDecode, SniffsTheFormatFromTheSignature) {
  EXPECT_EQ(sniff_image_format(read_image_file("rgb_64x96.png")), ImageFormat::png);
  EXPECT_EQ(sniff_image_format(read_image_file("up_30x40.jpg")), ImageFormat::jpeg);
  EXPECT_EQ(sniff_image_format(read_image_file("lossy_64x64.webp")), ImageFormat::webp);
  EXPECT_EQ(sniff_image_format(read_image_file("palette_70x90.gif")), ImageFormat::gif);
  const std::vector<uint8_t> text = {'h', 'e', 'l', 'l', 'o'};
  EXPECT_FALSE(sniff_image_format(text).has_value());
}

TEST(ImageDecode, RefusesUnknownAndEmptyInputByName) {
  EXPECT_ERROR_CONTAINS(decode_image({}), "expected PNG, JPEG, WebP or GIF data, found no bytes");
  const std::vector<uint8_t> bmp = {'B', 'M', 0, 0, 0, 0};
  EXPECT_ERROR_CONTAINS(decode_image(bmp), "expected PNG, JPEG, WebP or GIF data, found 6 bytes of another kind");
}

TEST(ImageDecode, RefusesFilesOverTheByteLimit) {
  const std::vector<uint8_t> png = read_image_file("rgb_64x96.png");
  ImageLimits limits;
  limits.max_bytes = png.size() - 1;
  EXPECT_ERROR_CONTAINS(decode_image(png, limits), "image of " + std::to_string(png.size()) + " bytes: expected at most " +
                                                       std::to_string(png.size() - 1) + " bytes");
  limits.max_bytes = png.size();
  EXPECT_TRUE(decode_image(png, limits).ok());
}

TEST(ImageDecode, RefusesImagesOverThePixelLimitInEveryFormat) {
  ImageLimits limits;
  limits.max_pixels = 64 * 96 - 1;
  EXPECT_ERROR_CONTAINS(decode_image(read_image_file("rgb_64x96.png"), limits),
                        "PNG image of 96 x 64 pixels: expected at most 6143 pixels");
  limits.max_pixels = 30 * 40 - 1;
  EXPECT_ERROR_CONTAINS(decode_image(read_image_file("up_30x40.jpg"), limits), "JPEG image of 40 x 30 pixels");
  limits.max_pixels = 64 * 64 - 1;
  EXPECT_ERROR_CONTAINS(decode_image(read_image_file("lossy_64x64.webp"), limits), "WebP image of 64 x 64 pixels");
  limits.max_pixels = 70 * 90 - 1;
  EXPECT_ERROR_CONTAINS(decode_image(read_image_file("palette_70x90.gif"), limits), "GIF image of 90 x 70 pixels");
}

// A header claiming a huge image is refused before anything of that size is allocated.
TEST(ImageDecode, RefusesAHugeClaimedSizeFromTheHeader) {
  std::vector<uint8_t> gif = read_image_file("palette_70x90.gif");
  gif[6] = gif[7] = gif[8] = gif[9] = 0xff;  // logical screen 65535 x 65535
  EXPECT_ERROR_CONTAINS(decode_image(gif), "GIF image of 65535 x 65535 pixels: expected at most 67108864 pixels");
}

TEST(ImageDecode, RefusesTruncatedFilesWithoutCrashing) {
  for (const std::string& name : kVisionImages) {
    const std::vector<uint8_t> bytes = read_image_file(name);
    for (size_t keep : {size_t{8}, size_t{16}, size_t{40}, bytes.size() / 2, bytes.size() - 1}) {
      const std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(keep));
      const Result<RgbImage> image = decode_image(cut);
      // A header cut short is always refused. A longer cut may still hold all the pixels read (a
      // GIF's first frame, a trailer the decoder does not need); then the image is whole.
      if (keep <= 40) {
        EXPECT_FALSE(image.ok()) << name << " cut to " << keep << " bytes decoded";
      }
      if (image.ok()) {
        EXPECT_EQ(image->pixels.size(), size_t(image->height * image->width * 3)) << name;
      } else {
        EXPECT_FALSE(image.status().message().empty()) << name;
      }
    }
  }
}

TEST(ImageDecode, CorruptImageDataIsAnErrorNotACrash) {
  for (const std::string& name : kVisionImages) {
    std::vector<uint8_t> bytes = read_image_file(name);
    Xoshiro256 rng(std::hash<std::string>{}(name));
    for (int round = 0; round < 50; ++round) {
      std::vector<uint8_t> corrupt = bytes;
      for (int flips = 0; flips < 8; ++flips) corrupt[16 + rng.next() % (corrupt.size() - 16)] ^= uint8_t(1 + rng.next() % 255);
      const Result<RgbImage> image = decode_image(corrupt);
      if (image.ok()) {
        EXPECT_EQ(image->pixels.size(), size_t(image->height * image->width * 3)) << name;
      } else {
        EXPECT_FALSE(image.status().message().empty()) << name;
      }
    }
  }
}

TEST(ExifOrientation, ReadsTheTagInBothByteOrdersAndIgnoresMalformedBlocks) {
  // II: little-endian header, IFD at 8, one entry: tag 0x0112, SHORT, count 1, value 6.
  const std::vector<uint8_t> le = {'I', 'I', 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(exif_orientation(le), 6);
  const std::vector<uint8_t> be = {'M', 'M', 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 8, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(exif_orientation(be), 8);
  std::vector<uint8_t> out_of_range = le;
  out_of_range[18] = 9;
  EXPECT_EQ(exif_orientation(out_of_range), 1);
  std::vector<uint8_t> ifd_outside = le;
  ifd_outside[4] = 200;
  EXPECT_EQ(exif_orientation(ifd_outside), 1);
  EXPECT_EQ(exif_orientation(std::span<const uint8_t>(le).first(20)), 1);  // entry cut short
  EXPECT_EQ(exif_orientation({}), 1);
}

}  // namespace
}  // namespace ds
