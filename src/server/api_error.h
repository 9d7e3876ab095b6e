// ApiError: an OpenAI error envelope — HTTP status, type, message naming what was expected and
// found, and the offending request field (`param`), as OpenAI and vLLM return them.
#pragma once

#include <string>

#include "util/status.h"

namespace ds::server {

struct ApiError {
  int status = 400;
  std::string message;
  std::string param;  // the request field at fault ("messages[1].content"), empty when none
  std::string code;   // OpenAI's machine-readable code ("model_not_found"); empty: the HTTP status

  // OpenAI's `type` for the status: invalid_request_error, not_found_error, rate_limit_error, ...
  const char* type() const;
  // {"error": {"message": ..., "type": ..., "param": ..., "code": code or status}}
  std::string body() const;
};

inline ApiError bad_request(std::string message, std::string param = {}) { return {400, std::move(message), std::move(param), {}}; }

// The one place an error's kind becomes an HTTP status: invalid_argument 400, not_found 404,
// overloaded 429, unavailable 503, internal 500.
int http_status(ErrorKind kind);
ApiError api_error(const Status& status, std::string param = {});

}  // namespace ds::server
