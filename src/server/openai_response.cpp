// OpenAI response shapes (see the official API reference; vLLM emits the same fields).
#include "server/openai_response.h"

namespace ds::server {

Json usage_json(int64_t prompt_tokens, int64_t completion_tokens, int64_t cached_tokens) {
  return Json{{"prompt_tokens", prompt_tokens}, {"completion_tokens", completion_tokens},
              {"total_tokens", prompt_tokens + completion_tokens},
              {"prompt_tokens_details", Json{{"cached_tokens", cached_tokens}}}};
}

Json tool_calls_json(const std::vector<ToolCallParser::ToolCall>& calls, bool with_index) {
  Json out = Json::array();
  for (const auto& call : calls) {
    Json item;
    if (with_index) item["index"] = call.index;
    item["id"] = call.id;
    item["type"] = "function";
    item["function"] = Json{{"name", call.name}, {"arguments", call.arguments}};
    out.push_back(std::move(item));
  }
  return out;
}

Json chat_logprobs_json(const std::vector<TokenLogprobView>& tokens) {
  Json content = Json::array();
  for (const TokenLogprobView& t : tokens) {
    Json top = Json::array();
    for (const auto& [text, logprob] : t.top)
      top.push_back(Json{{"token", text}, {"logprob", logprob}, {"bytes", Json(std::vector<uint8_t>(text.begin(), text.end()))}});
    content.push_back(Json{{"token", t.token}, {"logprob", t.logprob}, {"bytes", Json(t.bytes)}, {"top_logprobs", top}});
  }
  return Json{{"content", content}};
}

Json completion_logprobs_json(const std::vector<TokenLogprobView>& tokens, int64_t first_offset) {
  Json text = Json::array(), values = Json::array(), top = Json::array(), offsets = Json::array();
  int64_t offset = first_offset;
  for (const TokenLogprobView& t : tokens) {
    text.push_back(t.token);
    values.push_back(t.logprob);
    Json alternatives = Json::object();
    for (const auto& [token, logprob] : t.top) alternatives[token] = logprob;
    top.push_back(alternatives);
    offsets.push_back(offset);
    offset += static_cast<int64_t>(t.token.size());
  }
  return Json{{"tokens", text}, {"token_logprobs", values}, {"top_logprobs", top}, {"text_offset", offsets}};
}

Json chunk_json(const ResponseIdentity& who, int64_t index, const Json& delta_or_text, const Json& logprobs,
                const char* finish_reason, bool usage_null) {
  Json choice{{"index", index}};
  if (who.chat) choice["delta"] = delta_or_text;
  else choice["text"] = delta_or_text;
  choice["logprobs"] = logprobs;
  choice["finish_reason"] = finish_reason ? Json(finish_reason) : Json(nullptr);
  Json chunk{{"id", who.id}, {"object", who.chat ? "chat.completion.chunk" : "text_completion"}, {"created", who.created},
             {"model", who.model}, {"choices", Json::array({choice})}};
  if (usage_null) chunk["usage"] = nullptr;
  return chunk;
}

Json usage_chunk_json(const ResponseIdentity& who, const Json& usage) {
  return Json{{"id", who.id}, {"object", who.chat ? "chat.completion.chunk" : "text_completion"}, {"created", who.created},
              {"model", who.model}, {"choices", Json::array()}, {"usage", usage}};
}

std::string sse(const Json& data) {
  return "data: " + data.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n\n";
}

}  // namespace ds::server
