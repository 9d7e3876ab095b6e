// libFuzzer target: OpenAI request bodies as the server receives them — chat and completions
// parsing, then, for an accepted chat request, the chat template render the server runs next and
// the loading of its image parts (data: URLs through base64, the decoders and preprocessing).
#include <cstddef>
#include <cstdint>
#include <string>

#include "default_assets.h"
#include "server/image_inputs.h"
#include "server/openai_request.h"
#include "tokenizer/chat_template.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  const ds::server::SamplingDefaults defaults;
  ds::server::CompletionRequest completion;
  if (!ds::server::parse_completion_request(body, defaults, completion)) {
    if (completion.generation.n < 1 || completion.generation.stop.size() > 16) __builtin_trap();
  }
  ds::server::ChatCompletionRequest chat;
  if (auto error = ds::server::parse_chat_request(body, defaults, chat)) {
    if (error->status != 400 || error->message.empty()) __builtin_trap();
    return 0;
  }
  if (!chat.messages.is_array() || chat.messages.empty()) __builtin_trap();
  ds::ChatRequest request;
  request.messages = chat.messages;
  request.tools = chat.tools;
  request.template_kwargs = chat.template_kwargs;
  request.add_generation_prompt = chat.add_generation_prompt;
  ds::jinja::RenderLimits limits;
  limits.max_output_bytes = 1 << 20;
  limits.max_steps = 1000000;
  (void)ds::apply_chat_template(std::string(ds::app::default_chat_template()), nlohmann::ordered_json::object(), request, limits);
  static const ds::VisionModel vision;  // the preprocessor's class defaults; no tower is run
  ds::server::MediaOptions media;       // no file:// directory: local paths are refused
  media.limits.max_pixels = 1 << 16;    // small images keep each run fast
  auto images = ds::server::load_chat_images(chat.messages, media, &vision, "");
  if (const auto* error = std::get_if<ds::server::ApiError>(&images); error && (error->status != 400 || error->message.empty()))
    __builtin_trap();
  return 0;
}
