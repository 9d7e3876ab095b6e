// ApiError: an OpenAI error envelope — HTTP status, type, message naming what was expected and
// found, and the offending request field (`param`), as OpenAI and vLLM return them.
#pragma once

#include <string>

namespace ds::server {

struct ApiError {
  int status = 400;
  std::string message;
  std::string param;  // the request field at fault ("messages[1].content"), empty when none

  // OpenAI's `type` for the status: invalid_request_error, not_found_error, rate_limit_error, ...
  const char* type() const;
  // {"error": {"message": ..., "type": ..., "param": ..., "code": status}}
  std::string body() const;
};

inline ApiError bad_request(std::string message, std::string param = {}) { return {400, std::move(message), std::move(param)}; }

}  // namespace ds::server
