// vLLM's /tokenize and /detokenize bodies. /tokenize takes a completion's {"prompt": text} or a
// chat's {"messages", "add_generation_prompt", "chat_template_kwargs", "tools", ...} (parsed as
// /v1/chat/completions parses them); /detokenize takes {"tokens": [ids]}, each id in the vocabulary.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "server/api_error.h"

namespace ds::server {

enum class TokenizeKind { prompt, chat };

// Which form a /tokenize body has: "messages" → chat, "prompt" → prompt; neither is an error.
std::variant<TokenizeKind, ApiError> tokenize_request_kind(const std::string& body);

struct DetokenizeRequest {
  std::string model;  // empty: the served model
  std::vector<int32_t> tokens;
};

// Every id must lie in [0, id_limit): the error names the first that does not, and the range.
std::optional<ApiError> parse_detokenize_request(const std::string& body, int32_t id_limit, DetokenizeRequest& out);

}  // namespace ds::server
