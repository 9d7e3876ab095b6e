// OpenAI request bodies → typed requests: /v1/chat/completions and /v1/completions (plus vLLM's
// extensions top_k, min_p, repetition_penalty, stop_token_ids, ignore_eos, chat_template_kwargs).
// A pure function over the body text (fuzzed): every problem is an ApiError naming the field.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "engine/sampling_params.h"
#include "server/api_error.h"

namespace ds::server {

// Defaults a request falls back to: the checkpoint's generation_config.json, then OpenAI's.
struct SamplingDefaults {
  float temperature = 1.0f, top_p = 1.0f, min_p = 0.0f, repetition_penalty = 1.0f;
  int64_t top_k = 0;
};

// What both endpoints share.
struct GenerationRequest {
  std::string model;                     // empty: the served model
  SamplingParams sampling;               // max_tokens 0 until resolved against the prompt
  std::optional<int64_t> max_tokens;     // max_tokens / max_completion_tokens; none: up to the context limit
  int64_t n = 1;
  bool stream = false;
  bool include_usage = false;            // stream_options.include_usage
  std::vector<std::string> stop;         // stop strings (never emitted)
  bool skip_special_tokens = true;
};

struct ChatCompletionRequest {
  GenerationRequest generation;
  nlohmann::ordered_json messages;        // checked list of messages, tool_call arguments parsed to objects
  nlohmann::ordered_json tools;           // null or the list of tools given to the template
  bool parse_tool_calls = false;          // tools given and tool_choice allows calls
  nlohmann::ordered_json template_kwargs = nlohmann::ordered_json::object();
  bool add_generation_prompt = true;
  bool continue_final_message = false;
};

struct CompletionRequest {
  GenerationRequest generation;
  std::variant<std::string, std::vector<int32_t>> prompt;  // text, or token ids
  bool echo = false;
};

// Parses and validates; nullopt on success (top_logprobs / logprobs are bounded by kMaxLogprobs).
std::optional<ApiError> parse_chat_request(const std::string& body, const SamplingDefaults& defaults,
                                           ChatCompletionRequest& out);
std::optional<ApiError> parse_completion_request(const std::string& body, const SamplingDefaults& defaults,
                                                 CompletionRequest& out);

}  // namespace ds::server
