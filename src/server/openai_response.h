// OpenAI response shapes: chat.completion / chat.completion.chunk and text_completion objects,
// their choices, logprobs and usage, as the official client parses them.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/choice_output.h"

namespace ds::server {

using Json = nlohmann::ordered_json;

// Identity of one response: "chatcmpl-…" / "cmpl-…", creation time, model name.
struct ResponseIdentity {
  std::string id;
  int64_t created = 0;
  std::string model;
  bool chat = true;
};

// cached_tokens: prompt tokens the prefix cache held (usage.prompt_tokens_details.cached_tokens).
Json usage_json(int64_t prompt_tokens, int64_t completion_tokens, int64_t cached_tokens);
// Tool calls in OpenAI's form; `with_index` for stream deltas.
Json tool_calls_json(const std::vector<ToolCallParser::ToolCall>& calls, bool with_index);
// Chat logprobs: {"content": [{"token", "logprob", "bytes", "top_logprobs": [...]}]}.
Json chat_logprobs_json(const std::vector<TokenLogprobView>& tokens);
// Completions logprobs: {"tokens", "token_logprobs", "top_logprobs", "text_offset"}.
Json completion_logprobs_json(const std::vector<TokenLogprobView>& tokens, int64_t first_offset);

// One streamed chunk of one choice (delta; finish_reason null or set). `usage_null` adds
// "usage": null as OpenAI does when stream_options.include_usage is on.
Json chunk_json(const ResponseIdentity& who, int64_t index, const Json& delta_or_text, const Json& logprobs,
                const char* finish_reason, bool usage_null);
// The last chunk of a stream with include_usage: no choices, the usage.
Json usage_chunk_json(const ResponseIdentity& who, const Json& usage);
// A Server-Sent Events record.
std::string sse(const Json& data);

}  // namespace ds::server
