// parse_json: a request body → JSON, or an error that says where (line, column,
// byte offset) and what is wrong, naming invalid UTF-8 and lone UTF-16 surrogates as such; and what
// the endpoints share on top of it (a body that must be an object, a value's kind for messages).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "server/api_error.h"
#include "util/status.h"

namespace ds::server {

Status parse_json(const std::string& body, nlohmann::ordered_json& out);

// parse_json, then a 400 unless the body is a JSON object.
std::optional<ApiError> parse_json_object(const std::string& body, nlohmann::ordered_json& out);

// What a JSON value is, for messages: "null", "a boolean", "a string", "a list", "an object", "a number", "an integer".
const char* json_kind(const nlohmann::ordered_json& v);

}  // namespace ds::server
