// Images on the command line (generate --image, logits --messages): local files anywhere — the
// CLI's user names them — and data: URLs, loaded and laid into a prompt as the server does.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/image_inputs.h"
#include "util/status.h"
#include "vision/prompt_image.h"
#include "vision/vision_model.h"

namespace ds::app {

// One image file, decoded and preprocessed (the server's byte and pixel limits).
Result<PromptImage> load_image_file(const std::string& path, const VisionModel& vision);

// Image parts of `messages` whose URL is a plain path become absolute file:// URLs.
void local_paths_as_file_urls(nlohmann::ordered_json& messages);

// The image parts of checked `messages`, in prompt order (`vision` null: refused, `refusal` says why).
Result<std::vector<PromptImage>> load_message_images(const nlohmann::ordered_json& messages, const VisionModel* vision,
                                                     const std::string& refusal);

}  // namespace ds::app
