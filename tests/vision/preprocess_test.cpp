// Preprocessing against HF's Qwen2VLImageProcessor (torchvision backend): smart_resize, the uint8
// antialiased bicubic resize (bit for bit), pixel_values (bit for bit, by hash) and image_grid_thw,
// both fixture processor configs; and preprocessor_config.json parsing.
#include <gtest/gtest.h>

#include "vision/antialiased_bicubic_resize.h"
#include "vision/decode_image.h"
#include "vision/image_preprocessor.h"
#include "vision/preprocessor_config.h"
#include "vision/smart_resize.h"
#include "vision_fixture.h"

namespace ds {
namespace {

using test::kVisionFixture;
using test::kVisionImages;
using test::read_image_file;

// The released Qwen3.5 bounds: size {shortest_edge 256², longest_edge 4096²}, factor 32.
constexpr int64_t kReleasedMin = 65536, kReleasedMax = 16777216;

TEST(SmartResize, MatchesHfOnTheDocumentedSizes) {
  struct Case {
    int64_t h, w, want_h, want_w;
  };
  // qwen35-vision.md §1.3: half-to-even rounding (720 → 704, 1080 → 1088), upscaling, downscaling.
  for (const Case& c : {Case{64, 96, 224, 320}, Case{375, 500, 384, 512}, Case{720, 1280, 704, 1280},
                        Case{1080, 1920, 1088, 1920}, Case{3000, 4000, 3008, 4000}, Case{5000, 5000, 4096, 4096},
                        Case{512, 512, 512, 512}, Case{2048, 2048, 2048, 2048}}) {
    const Result<ResizedSize> size = smart_resize(c.h, c.w, 32, kReleasedMin, kReleasedMax);
    ASSERT_TRUE(size.ok()) << size.status().message();
    EXPECT_EQ(size->height, c.want_h) << c.h << " x " << c.w;
    EXPECT_EQ(size->width, c.want_w) << c.h << " x " << c.w;
  }
}

TEST(SmartResize, RoundsHalfToEven) {
  // 80 / 32 = 2.5 → 2 and 112 / 32 = 3.5 → 4 (std::round would give 3 and 4).
  const Result<ResizedSize> size = smart_resize(80, 112, 32, 0, 1 << 20);
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(size->height, 64);
  EXPECT_EQ(size->width, 128);
}

TEST(SmartResize, RefusesAnAspectRatioOver200) {
  EXPECT_ERROR_CONTAINS(smart_resize(1, 201, 32, kReleasedMin, kReleasedMax),
                        "image of 1 x 201: expected an aspect ratio of at most 200, found 201");
  EXPECT_TRUE(smart_resize(1, 200, 32, kReleasedMin, kReleasedMax).ok());
  EXPECT_ERROR_CONTAINS(smart_resize(0, 5, 32, kReleasedMin, kReleasedMax), "expected a size of at least 1 x 1");
}

TEST(PreprocessorConfig, ReadsTheReleasedKeysNotTheClassDefaults) {
  const Result<PreprocessorConfig> c = load_preprocessor_config(kVisionFixture.string());
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->min_pixels, 4096);
  EXPECT_EQ(c->max_pixels, 8192);
  EXPECT_EQ(c->patch_size, 16);  // the class default is 14
  EXPECT_EQ(c->merge_size, 2);
  EXPECT_EQ(c->temporal_patch_size, 2);
  EXPECT_EQ(c->image_mean[0], 0.5f);  // the class default is CLIP's
  EXPECT_EQ(c->image_std[2], 0.5f);
  EXPECT_EQ(c->patch_features(), 1536);
}

TEST(PreprocessorConfig, TopLevelMinAndMaxPixelsOverrideSize) {
  const Result<PreprocessorConfig> c = parse_preprocessor_config(
      test::read_file((kVisionFixture / "preprocessor_config_clip.json").string()));
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->min_pixels, 4096);
  EXPECT_EQ(c->max_pixels, 12288);
  EXPECT_EQ(c->image_mean[1], 0.4578275f);
}

TEST(PreprocessorConfig, RefusesWhatItCannotReproduceByName) {
  EXPECT_ERROR_CONTAINS(parse_preprocessor_config(R"({"image_processor_type": "SiglipImageProcessor"})"),
                        "preprocessor_config.json: image_processor_type: expected \"Qwen2VLImageProcessor\" or "
                        "\"Qwen2VLImageProcessorFast\", found \"SiglipImageProcessor\"");
  EXPECT_ERROR_CONTAINS(parse_preprocessor_config(R"({"resample": 2})"),
                        "resample: expected 3 (bicubic, the only resize implemented), found 2");
  EXPECT_ERROR_CONTAINS(parse_preprocessor_config(R"({"image_mean": [0.5, 0.5]})"),
                        "image_mean: expected a number or a list of 3 numbers (one per RGB channel), found [0.5,0.5]");
  EXPECT_ERROR_CONTAINS(parse_preprocessor_config(R"({"image_std": [0.5, 0, 0.5]})"), "image_std: expected positive values, found 0");
  EXPECT_ERROR_CONTAINS(parse_preprocessor_config(R"({"size": {"shortest_edge": 9000, "longest_edge": 8192}})"),
                        "expected min_pixels (size.shortest_edge) 9000 to be at most max_pixels (size.longest_edge), found 8192");
  EXPECT_ERROR_CONTAINS(parse_preprocessor_config(R"({"size": {"shortest_edge": 9000}})"), "size.longest_edge");
  EXPECT_ERROR_CONTAINS(parse_preprocessor_config(R"({"do_rescale": false, "do_normalize": false})"),
                        "expected do_rescale or do_normalize");
  EXPECT_ERROR_CONTAINS(parse_preprocessor_config("[1]"), "expected a JSON object, found array");
  EXPECT_FALSE(load_preprocessor_config("/nonexistent").ok());
}

// The case's resized image against HF's uint8 resize output, sample for sample.
void expect_resized_as_hf(const test::VisionReference& ref, const std::string& name, const RgbImage& decoded,
                          const PreprocessorConfig& config) {
  const Result<ResizedSize> size =
      smart_resize(decoded.height, decoded.width, config.resize_factor(), config.min_pixels, config.max_pixels);
  ASSERT_TRUE(size.ok());
  const RgbImage resized = antialiased_bicubic_resize(decoded, size->height, size->width);
  const std::string key = name + (ref.has(name + ".resized") ? ".resized" : ".decoded");
  const std::vector<int64_t> shape = ref.shape(key);
  ASSERT_EQ(resized.height, shape[0]) << name;
  ASSERT_EQ(resized.width, shape[1]) << name;
  const std::vector<uint8_t> want = ref.values<uint8_t>(key);
  int64_t differing = 0;
  for (size_t i = 0; i < want.size(); ++i) differing += resized.pixels[i] != want[i];
  EXPECT_EQ(differing, 0) << name << ": " << differing << " of " << want.size() << " resized samples differ from HF's";
}

void expect_pixel_values_as_hf(const test::VisionReference& ref, const std::string& key, const RgbImage& decoded,
                               const PreprocessorConfig& config) {
  const Result<PreprocessedImage> image = preprocess_image(decoded, config);
  ASSERT_TRUE(image.ok()) << image.status().message();
  const std::vector<int64_t> grid = ref.values<int64_t>(key + ".image_grid_thw");
  ASSERT_EQ(grid.size(), 3u);
  EXPECT_EQ(image->grid_t, grid[0]) << key;
  EXPECT_EQ(image->grid_h, grid[1]) << key;
  EXPECT_EQ(image->grid_w, grid[2]) << key;
  const std::vector<float> head = ref.values<float>(key + ".pixel_values_head");
  for (size_t i = 0; i < head.size(); ++i) ASSERT_EQ(image->pixel_values[i], head[i]) << key << " value " << i;
  EXPECT_EQ(test::fnv1a64(image->pixel_values.data(), image->pixel_values.size() * 4),
            ref.hash(key + ".pixel_values_fnv1a64"))
      << key << ": pixel_values are not HF's bit for bit";
}

TEST(Preprocess, ResizedImagesAreHfsBitForBit) {
  const test::VisionReference ref;
  const Result<PreprocessorConfig> config = load_preprocessor_config(kVisionFixture.string());
  ASSERT_TRUE(config.ok());
  for (const std::string& name : kVisionImages) {
    // HF's decoded pixels, so this checks the resize alone (image_decode_test checks the decoders).
    RgbImage decoded;
    const std::vector<int64_t> shape = ref.shape(name + ".decoded");
    decoded.height = shape[0], decoded.width = shape[1], decoded.pixels = ref.values<uint8_t>(name + ".decoded");
    expect_resized_as_hf(ref, name, decoded, *config);
  }
}

TEST(Preprocess, PixelValuesAndGridsAreHfsBitForBit) {
  const test::VisionReference ref;
  const Result<PreprocessorConfig> config = load_preprocessor_config(kVisionFixture.string());
  ASSERT_TRUE(config.ok());
  for (const std::string& name : kVisionImages) {
    const Result<RgbImage> decoded = decode_image(read_image_file(name));
    ASSERT_TRUE(decoded.ok()) << decoded.status().message();
    expect_pixel_values_as_hf(ref, name, *decoded, *config);
  }
}

TEST(Preprocess, OtherMeanStdAndPixelBoundsFromTheFileAreHfs) {
  const test::VisionReference ref;
  const Result<PreprocessorConfig> config = parse_preprocessor_config(
      test::read_file((kVisionFixture / "preprocessor_config_clip.json").string()));
  ASSERT_TRUE(config.ok());
  const Result<RgbImage> decoded = decode_image(read_image_file(kVisionImages[0]));
  ASSERT_TRUE(decoded.ok());
  expect_pixel_values_as_hf(ref, kVisionImages[0] + ".clip", *decoded, *config);
}

TEST(Preprocess, PatchRowsFollowTheMergeBlockOrder) {
  // A 32 x 64 image whose every pixel holds its patch's column (red) and row (green): row k of
  // pixel_values must be patch (2·br + ir, 2·bc + ic) with k = ((br·2 + bc)·2 + ir)·2 + ic.
  RgbImage image;
  image.height = 32, image.width = 64;
  image.pixels.resize(32 * 64 * 3);
  for (int64_t y = 0; y < 32; ++y)
    for (int64_t x = 0; x < 64; ++x) {
      image.row(y)[3 * x] = static_cast<uint8_t>(x / 16);
      image.row(y)[3 * x + 1] = static_cast<uint8_t>(y / 16);
    }
  PreprocessorConfig config;
  config.patch_size = 16, config.do_resize = false, config.do_normalize = false;  // values = x · rescale
  config.rescale_factor = 1.0;
  const Result<PreprocessedImage> out = preprocess_image(image, config);
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_EQ(out->grid_h, 2);
  ASSERT_EQ(out->grid_w, 4);
  const int64_t want[8][2] = {{0, 0}, {0, 1}, {1, 0}, {1, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}};  // (row, col)
  for (int64_t k = 0; k < 8; ++k) {
    const float* row = out->pixel_values.data() + k * config.patch_features();
    EXPECT_EQ(row[0], static_cast<float>(want[k][1])) << "row " << k << " red (column)";
    EXPECT_EQ(row[2 * 256], static_cast<float>(want[k][0])) << "row " << k << " green (row), channel 1 of frame 0";
    EXPECT_EQ(row[256 + 255], row[255]) << "frame 1 repeats frame 0";
  }
}

}  // namespace
}  // namespace ds
