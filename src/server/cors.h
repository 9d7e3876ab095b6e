// CorsPolicy: which browser origins may call the API (--allowed-origins, --allowed-methods,
// --allowed-headers, --allow-credentials, as vLLM names them). Off when no origin is allowed:
// then no response carries CORS headers and browsers keep cross-origin pages out.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ds::server {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct CorsPolicy {
  std::vector<std::string> origins;                      // "*" or scheme://host[:port]; empty: CORS off
  std::vector<std::string> methods = {"*"};              // "*": any method the client asks for
  std::vector<std::string> headers = {"*"};              // "*": any header the client asks for
  bool allow_credentials = false;
  int max_age_seconds = 600;                             // how long a browser may reuse a preflight

  bool enabled() const { return !origins.empty(); }
  // Exact match, case-insensitive, a trailing "/" in the configured origin ignored; "*" matches all.
  bool allows_origin(std::string_view origin) const;
  // The headers an ordinary response to an allowed origin carries (empty for any other origin).
  HeaderList response_headers(std::string_view origin) const;
};

// A preflight's answer: 204 with the CORS headers, or 403 with the reason (no CORS headers, so
// the browser refuses the real request).
struct PreflightAnswer {
  int status = 204;
  HeaderList headers;
  std::string refusal;  // why a 403; empty on 204
};

PreflightAnswer answer_preflight(const CorsPolicy& policy, std::string_view origin, std::string_view requested_method,
                                 std::string_view requested_headers);

// A flag's list: a JSON list (vLLM's form, '["http://a", "http://b"]') or comma-separated text.
// Empty items are dropped; an unterminated JSON list is an error message (empty on success).
std::string parse_flag_list(std::string_view text, std::vector<std::string>& out);

}  // namespace ds::server
