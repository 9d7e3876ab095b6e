// parse_json: a request body → JSON, or an error that says where (line, column,
// byte offset) and what is wrong, naming invalid UTF-8 and lone UTF-16 surrogates as such.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "util/status.h"

namespace ds::server {

Status parse_json(const std::string& body, nlohmann::ordered_json& out);

}  // namespace ds::server
