// ApiError: the JSON body of an error response.
#include "server/api_error.h"

#include <nlohmann/json.hpp>

namespace ds::server {

const char* ApiError::type() const {
  switch (status) {
    case 400: return "invalid_request_error";
    case 404: return "not_found_error";
    case 413: return "invalid_request_error";
    case 429: return "rate_limit_error";
    case 503: return "service_unavailable_error";
    default: return status >= 500 ? "internal_server_error" : "invalid_request_error";
  }
}

std::string ApiError::body() const {
  nlohmann::ordered_json error = {{"message", message}, {"type", type()}, {"param", nullptr}, {"code", status}};
  if (!param.empty()) error["param"] = param;
  return nlohmann::ordered_json{{"error", error}}.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace ds::server
