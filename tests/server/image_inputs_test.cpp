// The images of chat requests (server/image_inputs.h) on the HF vision fixture: data: and file://
// URLs load exactly what the file gives, and every refusal — scheme, directory escape (also by a
// symlink), count, bytes, pixels, bad base64, a truncated file, a text-only model — is a 400 that
// names the part and says what was expected and what was found.
#include <gtest/gtest.h>

#include <filesystem>

#include "../vision/vision_fixture.h"
#include "model/model_loader.h"
#include "server/image_inputs.h"
#include "util/base64.h"

namespace ds::server {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using test::kVisionFixture;

std::string base64(const std::vector<uint8_t>& bytes) {
  static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const uint32_t n = (uint32_t{bytes[i]} << 16) | (i + 1 < bytes.size() ? uint32_t{bytes[i + 1]} << 8 : 0) |
                       (i + 2 < bytes.size() ? uint32_t{bytes[i + 2]} : 0);
    out += alphabet[(n >> 18) & 63];
    out += alphabet[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? alphabet[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? alphabet[n & 63] : '=';
  }
  return out;
}

std::string data_url(const std::string& image) { return "data:image/png;base64," + base64(test::read_image_file(image)); }

Json chat(const std::vector<std::string>& urls) {
  Json content = Json::array({Json{{"type", "text"}, {"text", "Look:"}}});
  for (const std::string& url : urls) content.push_back(Json{{"type", "image_url"}, {"image_url", {{"url", url}}}});
  return Json::array({Json{{"role", "user"}, {"content", content}}});
}

class ImageInputs : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = open_checkpoint(kVisionFixture.string());
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    config_ = opened->first;
    checkpoint_ = std::move(opened->second);
    auto vision = load_vision_model(*checkpoint_, config_, kVisionFixture.string());
    ASSERT_TRUE(vision.ok()) << vision.status().message();
    vision_ = std::move(vision).value();
  }
  std::variant<std::vector<PromptImage>, ApiError> load(const Json& messages, const MediaOptions& options = {}) {
    return load_chat_images(messages, options, vision_.get(), "");
  }
  // The refusal's message (failing the test when the load succeeded), its param checked.
  std::string refusal(const Json& messages, const MediaOptions& options = {}, const std::string& param = "messages[0].content[1].image_url.url") {
    auto loaded = load(messages, options);
    const auto* error = std::get_if<ApiError>(&loaded);
    if (error == nullptr) {
      ADD_FAILURE() << "expected a refusal";
      return {};
    }
    EXPECT_EQ(error->status, 400);
    EXPECT_EQ(error->param, param);
    return error->message;
  }
  PromptImage from_file(const std::string& name) {
    auto image = prepare_image(test::read_image_file(name), ImageLimits{}, vision_->preprocessor);
    EXPECT_TRUE(image.ok());
    return std::move(image).value();
  }

  ModelConfig config_;
  std::unique_ptr<Checkpoint> checkpoint_;
  std::unique_ptr<VisionModel> vision_;
  test::TempDir tmp_;
};

void expect_same(const PromptImage& a, const PromptImage& b) {
  EXPECT_EQ(a.content_hash, b.content_hash);
  EXPECT_EQ(a.grid.h, b.grid.h);
  EXPECT_EQ(a.grid.w, b.grid.w);
  EXPECT_EQ(*a.pixel_values, *b.pixel_values);
}

TEST_F(ImageInputs, DataAndFileUrlsLoadWhatTheFileGivesInPromptOrder) {
  fs::copy_file(kVisionFixture / "images" / "up_30x40.jpg", tmp_ / "my image.jpg");
  MediaOptions options;
  options.allowed_local_media_path = fs::canonical(tmp_.path()).string();
  const Json messages = chat({data_url("rgb_64x96.png"), "file://" + options.allowed_local_media_path + "/my%20image.jpg"});
  EXPECT_EQ(count_image_parts(messages), 2);
  auto loaded = load(messages, options);
  ASSERT_TRUE(std::holds_alternative<std::vector<PromptImage>>(loaded)) << std::get<ApiError>(loaded).message;
  const auto& images = std::get<std::vector<PromptImage>>(loaded);
  ASSERT_EQ(images.size(), 2u);
  expect_same(images[0], from_file("rgb_64x96.png"));
  expect_same(images[1], from_file("up_30x40.jpg"));
  EXPECT_NE(images[0].content_hash, images[1].content_hash);
}

TEST_F(ImageInputs, FileUrlsOnlyUnderTheAllowedDirectory) {
  fs::create_directory(tmp_ / "allowed");
  fs::copy_file(kVisionFixture / "images" / "rgb_64x96.png", tmp_ / "outside.png");
  fs::create_symlink(tmp_ / "outside.png", tmp_ / "allowed/link.png");
  const std::string dir = fs::canonical(tmp_ / "allowed").string();
  MediaOptions options;
  EXPECT_NE(refusal(chat({"file://" + dir + "/link.png"}), options).find("without --allowed-local-media-path"), std::string::npos);
  options.allowed_local_media_path = dir;
  EXPECT_NE(refusal(chat({"file://" + dir + "/link.png"}), options).find("expected a file under --allowed-local-media-path"),
            std::string::npos)
      << "a symlink out of the directory is outside it";
  EXPECT_NE(refusal(chat({"file://" + dir + "/../outside.png"}), options).find("expected a file under"), std::string::npos);
  EXPECT_NE(refusal(chat({"file://" + dir + "/missing.png"}), options).find("cannot open"), std::string::npos);
  // Outside the directory a missing file and an existing one get the same answer: no probing.
  const std::string outside_missing = refusal(chat({"file://" + dir + "/../missing.png"}), options);
  EXPECT_NE(outside_missing.find("expected a file under"), std::string::npos) << outside_missing;
  EXPECT_EQ(outside_missing.find("cannot open"), std::string::npos) << outside_missing;
  EXPECT_NE(refusal(chat({"file://" + dir}), options).find("expected a regular file"), std::string::npos);
  EXPECT_NE(refusal(chat({"file://relative.png"}), options).find("expected file:///absolute/path"), std::string::npos);
  // A symlink that stays inside is fine.
  fs::copy_file(tmp_ / "outside.png", tmp_ / "allowed/inside.png");
  fs::create_symlink(tmp_ / "allowed/inside.png", tmp_ / "allowed/alias.png");
  EXPECT_TRUE(std::holds_alternative<std::vector<PromptImage>>(load(chat({"file://" + dir + "/alias.png"}), options)));
}

TEST_F(ImageInputs, EveryRefusalSaysWhatWasExpectedAndFound) {
  EXPECT_NE(refusal(chat({"https://example.com/cat.png"})).find("http(s) image URLs are not fetched"), std::string::npos);
  EXPECT_NE(refusal(chat({"ftp://x"})).find("expected a data:, file:// or http(s) URL, found \"ftp://x\""), std::string::npos);
  EXPECT_NE(refusal(chat({"data:image/png,abc"})).find("expected a base64 data: URL"), std::string::npos);
  EXPECT_NE(refusal(chat({"data:text/plain;base64,aGk="})).find("expected an image media type"), std::string::npos);
  EXPECT_NE(refusal(chat({"data:image/png;base64,iVBO*w0K"})).find("at offset 4, found '*'"), std::string::npos);
  EXPECT_NE(refusal(chat({"data:image/png;base64,aGk"})).find("PNG"), std::string::npos) << "not an image: named by what it is not";
  const std::string png = data_url("rgb_64x96.png");
  const std::string truncated = png.substr(0, png.size() / 2 / 4 * 4);
  EXPECT_NE(refusal(chat({truncated})).find("PNG"), std::string::npos);

  MediaOptions options;
  options.limits.max_bytes = 1000;
  EXPECT_NE(refusal(chat({png}), options).find("expected at most 1000 decoded bytes, found 12594"), std::string::npos);
  options = {};
  options.limits.max_pixels = 1000;
  EXPECT_NE(refusal(chat({png}), options).find("1000"), std::string::npos);
  options = {};
  options.max_images = 1;
  EXPECT_NE(refusal(chat({png, png}), options, "messages").find("expected at most 1 images per request (--limit-mm-per-prompt), found 2"),
            std::string::npos);
  // A text-only model refuses images by name, whatever the URL.
  auto loaded = load_chat_images(chat({png}), {}, nullptr, "its config.json has no vision_config");
  const auto* error = std::get_if<ApiError>(&loaded);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->param, "messages[0].content[1]");
  EXPECT_NE(error->message.find("this model takes text only"), std::string::npos) << error->message;
}

TEST(Base64, DecodesAndRefusesByOffset) {
  auto decoded = decode_base64("aGVsbG8=", 100);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(std::string(decoded->begin(), decoded->end()), "hello");
  decoded = decode_base64("aGVsbG8", 100);  // padding optional
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(std::string(decoded->begin(), decoded->end()), "hello");
  EXPECT_FALSE(decode_base64("aGVsb", 100).ok());
  EXPECT_FALSE(decode_base64("aG=sbG8=", 100).ok());
  EXPECT_FALSE(decode_base64("aGVsbG8==", 100).ok());
  EXPECT_NE(decode_base64("aGVs\nbG8", 100).status().message().find("offset 4, found byte 0x0a"), std::string::npos);
  EXPECT_NE(decode_base64("aGVsbG8=", 4).status().message().find("at most 4 decoded bytes, found 5"), std::string::npos);
}

TEST(ImageLimit, ParsesVllmsJson) {
  auto limit = parse_image_limit(R"({"image": 4})");
  ASSERT_TRUE(limit.ok());
  EXPECT_EQ(*limit, 4);
  EXPECT_NE(parse_image_limit(R"({"video": 1})").status().message().find("only \"image\""), std::string::npos);
  EXPECT_NE(parse_image_limit("4").status().message().find("expected JSON like"), std::string::npos);
  EXPECT_NE(parse_image_limit(R"({"image": -1})").status().message().find("expected a count"), std::string::npos);
}

}  // namespace
}  // namespace ds::server
