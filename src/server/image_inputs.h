// The images of a chat request: its OpenAI image_url content parts, in the order the chat template
// renders them (message by message, part by part), loaded from data: URLs — or file:// URLs under
// --allowed-local-media-path — then decoded and preprocessed for the checkpoint's tower. Every
// refusal is a 400 naming the part, what was expected and what was found.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "server/api_error.h"
#include "vision/prompt_image.h"
#include "vision/vision_model.h"

namespace ds::server {

// The default of --limit-mm-per-prompt's "image": a chat's history carries its images again each
// turn, and one image's pixel_values take 24 bytes per resized pixel (a 4096² image: 384 MiB).
inline constexpr int64_t kDefaultMaxImages = 8;

struct MediaOptions {
  std::string allowed_local_media_path;  // a canonical directory; empty: file:// URLs are refused
  int64_t max_images = kDefaultMaxImages;
  ImageLimits limits;  // one image's encoded bytes and pixels
};

// How many image_url parts `messages` (parse_chat_request's checked list) holds.
int64_t count_image_parts(const nlohmann::ordered_json& messages);

// Loads every image part. `vision` null: the model takes text only, and `refusal` says why.
std::variant<std::vector<PromptImage>, ApiError> load_chat_images(const nlohmann::ordered_json& messages,
                                                                   const MediaOptions& options,
                                                                   const VisionModel* vision, const std::string& refusal);

// --limit-mm-per-prompt: JSON like {"image": 4} (vLLM's form); refuses other modalities by name.
Result<int64_t> parse_image_limit(const std::string& json);

}  // namespace ds::server
