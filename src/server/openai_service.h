// OpenAiService: the OpenAI API over the engine, independent of HTTP — validates a body, renders the
// chat template, tokenizes, checks the context limit, submits n choices and hands back a
// Generation to run; or an ApiError before anything is sent. Also the render and models routes.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <variant>

#include "engine/engine.h"
#include "server/api_error.h"
#include "server/generation.h"
#include "server/image_inputs.h"
#include "server/metrics.h"
#include "server/openai_request.h"
#include "tokenizer/tokenizer.h"

namespace ds::server {

struct ServedModel {
  std::string name;                                 // what /v1/models lists and requests must name
  const Tokenizer* tokenizer = nullptr;
  std::string chat_template;                        // source; empty: /v1/chat/completions answers 400
  nlohmann::ordered_json special_tokens = nlohmann::ordered_json::object();
  nlohmann::ordered_json default_template_kwargs = nlohmann::ordered_json::object();  // --default-template-kwargs
  SamplingDefaults defaults;                        // generation_config.json
  int64_t default_max_tokens = 0;                   // --default-max-tokens; 0: the rest of the context
  const VisionModel* vision = nullptr;              // the checkpoint's tower; null: images are refused
  std::string vision_refusal = "its config.json has no vision_config";  // why vision is null, for the refusal
  MediaOptions media;                               // --allowed-local-media-path, --limit-mm-per-prompt
};

class OpenAiService {
 public:
  OpenAiService(Engine& engine, ServedModel model, ServerMetrics& metrics);

  std::variant<std::unique_ptr<Generation>, ApiError> chat(const std::string& body);
  std::variant<std::unique_ptr<Generation>, ApiError> completion(const std::string& body);
  // vLLM's /v1/chat/completions/render and /v1/completions/render: the prompt and its token ids.
  std::variant<std::string, ApiError> render_chat(const std::string& body);
  std::variant<std::string, ApiError> render_completion(const std::string& body);
  // vLLM's /tokenize ({"prompt"} or a chat's {"messages", ...}) → {"count", "max_model_len", "tokens"};
  // /detokenize ({"tokens"}) → {"prompt"}.
  std::variant<std::string, ApiError> tokenize(const std::string& body);
  std::variant<std::string, ApiError> detokenize(const std::string& body);
  std::string models() const;
  const ServedModel& model() const { return model_; }

 private:
  struct Prompt {
    std::string text;             // rendered chat prompt (empty for token-id completions)
    std::vector<int32_t> ids;     // each image's pad expanded to its token count
    std::vector<PromptImage> images;  // the chat's image parts, in prompt order
  };
  // Parse, check the model, build the prompt (the request is filled as a side result).
  std::variant<Prompt, ApiError> prepare_chat(const std::string& body, ChatCompletionRequest& request) const;
  std::variant<Prompt, ApiError> prepare_completion(const std::string& body, CompletionRequest& request) const;
  static std::variant<std::string, ApiError> render(const std::variant<Prompt, ApiError>& prompt);
  std::variant<Prompt, ApiError> chat_prompt(const ChatCompletionRequest& request) const;
  std::variant<Prompt, ApiError> completion_prompt(const CompletionRequest& request) const;
  std::optional<ApiError> check_model(const GenerationRequest& g) const;
  std::variant<std::unique_ptr<Generation>, ApiError> start(GenerationRequest& g, const Prompt& prompt, bool chat,
                                                            ChoiceSettings settings, const char* prompt_field);

  Engine& engine_;
  ServedModel model_;
  ServerMetrics& metrics_;
  std::atomic<uint64_t> next_id_{0};
  int64_t created_ = 0;  // server start time: /v1/models' "created"
};

}  // namespace ds::server
