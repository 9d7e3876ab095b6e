// ApiError: the JSON body of an error response, and the mapping from a Status's kind to HTTP.
#include "server/api_error.h"

#include <nlohmann/json.hpp>

namespace ds::server {

const char* ApiError::type() const {
  switch (status) {
    case 400: return "invalid_request_error";
    case 401: return "invalid_request_error";  // OpenAI's type for a wrong key (code invalid_api_key)
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 405: return "invalid_request_error";
    case 413: return "invalid_request_error";
    case 429: return "rate_limit_error";
    case 503: return "service_unavailable_error";
    default: return status >= 500 ? "internal_server_error" : "invalid_request_error";
  }
}

std::string ApiError::body() const {
  nlohmann::ordered_json error = {{"message", message}, {"type", type()}, {"param", nullptr}, {"code", status}};
  if (!param.empty()) error["param"] = param;
  if (!code.empty()) error["code"] = code;
  return nlohmann::ordered_json{{"error", error}}.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

int http_status(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::invalid_argument: return 400;
    case ErrorKind::not_found: return 404;
    case ErrorKind::overloaded: return 429;
    case ErrorKind::unavailable: return 503;
    case ErrorKind::internal: return 500;
  }
  return 500;
}

ApiError api_error(const Status& status, std::string param) {
  return ApiError{http_status(status.kind()), status.message(), std::move(param), {}};
}

}  // namespace ds::server
