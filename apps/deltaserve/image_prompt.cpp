// Images on the command line: files and chat image parts through the server's loader.
#include "image_prompt.h"

#include <filesystem>
#include <fstream>
#include <limits>

#include "util/str_cat.h"

namespace ds::app {

Result<PromptImage> load_image_file(const std::string& path, const VisionModel& vision) {
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) return Status::errorf("--image ", path, ": cannot read it (", ec.message(), ")");
  const ImageLimits limits;
  if (size > limits.max_bytes)
    return Status::errorf("--image ", path, ": expected at most ", limits.max_bytes, " bytes, found ", size);
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size)))
    return Status::errorf("--image ", path, ": cannot read it");
  Result<PromptImage> image = prepare_image(bytes, limits, vision.preprocessor);
  if (!image.ok()) return image.status().with_context(str_cat("--image ", path));
  return image;
}

void local_paths_as_file_urls(nlohmann::ordered_json& messages) {
  if (!messages.is_array()) return;
  for (auto& message : messages) {
    if (!message.is_object() || !message.contains("content") || !message["content"].is_array()) continue;
    for (auto& part : message["content"]) {
      if (!part.is_object() || part.value("type", "") != "image_url" || !part.contains("image_url") ||
          !part["image_url"].is_object() || !part["image_url"].contains("url") || !part["image_url"]["url"].is_string())
        continue;
      const std::string url = part["image_url"]["url"].get<std::string>();
      if (url.find("://") != std::string::npos || url.rfind("data:", 0) == 0) continue;
      part["image_url"]["url"] = "file://" + std::filesystem::absolute(url).lexically_normal().string();
    }
  }
}

Result<std::vector<PromptImage>> load_message_images(const nlohmann::ordered_json& messages, const VisionModel* vision,
                                                     const std::string& refusal) {
  server::MediaOptions media;
  media.allowed_local_media_path = "/";
  media.max_images = std::numeric_limits<int64_t>::max();
  auto loaded = server::load_chat_images(messages, media, vision, refusal);
  if (auto* error = std::get_if<server::ApiError>(&loaded)) return Status::error(error->message);
  return std::move(std::get<std::vector<PromptImage>>(loaded));
}

}  // namespace ds::app
