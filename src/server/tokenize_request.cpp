// /tokenize and /detokenize bodies: which form, and the token ids checked against the vocabulary.
#include "server/tokenize_request.h"

#include <nlohmann/json.hpp>

#include "server/json_body.h"
#include "util/str_cat.h"

namespace ds::server {

using Json = nlohmann::ordered_json;

std::variant<TokenizeKind, ApiError> tokenize_request_kind(const std::string& body) {
  Json json;
  if (auto error = parse_json_object(body, json)) return *error;
  const bool chat = json.contains("messages") && !json["messages"].is_null();
  const bool prompt = json.contains("prompt") && !json["prompt"].is_null();
  if (chat && prompt) return bad_request("expected either \"prompt\" or \"messages\", found both", "prompt");
  if (chat) return TokenizeKind::chat;
  if (prompt) return TokenizeKind::prompt;
  return bad_request("required: \"prompt\" (text to tokenize) or \"messages\" (a chat to render and tokenize)", "prompt");
}

std::optional<ApiError> parse_detokenize_request(const std::string& body, int32_t id_limit, DetokenizeRequest& out) {
  Json json;
  if (auto error = parse_json_object(body, json)) return error;
  if (json.contains("model") && !json["model"].is_null()) {
    if (!json["model"].is_string()) return bad_request("model: expected a string", "model");
    out.model = json["model"].get<std::string>();
  }
  if (!json.contains("tokens")) return bad_request("tokens: required: a list of token ids", "tokens");
  const Json& tokens = json["tokens"];
  if (!tokens.is_array()) return bad_request("tokens: expected a list of token ids", "tokens");
  for (size_t i = 0; i < tokens.size(); ++i) {
    const Json& id = tokens[i];
    if (!id.is_number_integer()) return bad_request(str_cat("tokens[", i, "]: expected an integer token id, found ", id.dump()), "tokens");
    if (id.is_number_unsigned() ? id.get<uint64_t>() >= static_cast<uint64_t>(id_limit)
                                : (id.get<int64_t>() < 0 || id.get<int64_t>() >= id_limit))
      return bad_request(str_cat("tokens[", i, "]: token id ", id.dump(), " is outside the vocabulary [0, ", id_limit, ")"), "tokens");
    out.tokens.push_back(static_cast<int32_t>(id.get<int64_t>()));
  }
  return std::nullopt;
}

}  // namespace ds::server
