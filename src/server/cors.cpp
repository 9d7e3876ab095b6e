// CorsPolicy: origin matching and the headers of preflights and responses.
#include "server/cors.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "util/str_cat.h"
#include "util/trim.h"

namespace ds::server {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool contains(const std::vector<std::string>& list, std::string_view item) {
  const std::string wanted = lower(item);
  return std::any_of(list.begin(), list.end(), [&](const std::string& x) { return x == "*" || lower(x) == wanted; });
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::vector<std::string> split_commas(std::string_view text) {
  std::vector<std::string> items;
  for (size_t start = 0; start <= text.size();) {
    const size_t comma = std::min(text.find(',', start), text.size());
    if (std::string_view item = trim_spaces(text.substr(start, comma - start)); !item.empty()) items.emplace_back(item);
    start = comma + 1;
  }
  return items;
}

}  // namespace

bool CorsPolicy::allows_origin(std::string_view origin) const {
  if (origin.empty()) return false;
  const std::string wanted = lower(origin);
  return std::any_of(origins.begin(), origins.end(), [&](const std::string& allowed) {
    if (allowed == "*") return true;
    std::string_view a = allowed;
    if (a.size() > 1 && a.back() == '/') a.remove_suffix(1);
    return lower(a) == wanted;
  });
}

HeaderList CorsPolicy::response_headers(std::string_view origin) const {
  if (!allows_origin(origin)) return {};
  // With credentials a browser refuses "*": the origin itself is named then.
  const bool any = std::find(origins.begin(), origins.end(), "*") != origins.end();
  HeaderList headers{{"Access-Control-Allow-Origin", any && !allow_credentials ? "*" : std::string(origin)}};
  headers.emplace_back("Vary", "Origin");  // caches must not hand one origin's answer to another
  if (allow_credentials) headers.emplace_back("Access-Control-Allow-Credentials", "true");
  return headers;
}

PreflightAnswer answer_preflight(const CorsPolicy& policy, std::string_view origin, std::string_view requested_method,
                                 std::string_view requested_headers) {
  PreflightAnswer answer;
  if (!policy.allows_origin(origin)) {
    answer.status = 403;
    answer.refusal = str_cat("CORS: the origin \"", origin, "\" is not allowed (--allowed-origins: ",
                             policy.origins.empty() ? "none" : join(policy.origins), ")");
    return answer;
  }
  if (!requested_method.empty() && !contains(policy.methods, requested_method)) {
    answer.status = 403;
    answer.refusal = str_cat("CORS: the method ", requested_method, " is not allowed (--allowed-methods: ", join(policy.methods), ")");
    return answer;
  }
  const std::vector<std::string> asked = split_commas(requested_headers);
  for (const std::string& header : asked) {
    if (!contains(policy.headers, header)) {
      answer.status = 403;
      answer.refusal = str_cat("CORS: the header ", header, " is not allowed (--allowed-headers: ", join(policy.headers), ")");
      return answer;
    }
  }
  answer.headers = policy.response_headers(origin);
  // "*" is echoed as what was asked: a literal "*" never covers Authorization, and with
  // credentials browsers read it as a header named "*".
  const bool any_method = std::find(policy.methods.begin(), policy.methods.end(), "*") != policy.methods.end();
  answer.headers.emplace_back("Access-Control-Allow-Methods",
                              any_method ? std::string("GET, POST, OPTIONS") : join(policy.methods));
  const bool any_header = std::find(policy.headers.begin(), policy.headers.end(), "*") != policy.headers.end();
  std::vector<std::string> allowed_headers = any_header ? asked : policy.headers;
  if (any_header)
    for (const char* needed : {"Authorization", "Content-Type"})
      if (!contains(allowed_headers, needed)) allowed_headers.emplace_back(needed);
  answer.headers.emplace_back("Access-Control-Allow-Headers", join(allowed_headers));
  answer.headers.emplace_back("Access-Control-Max-Age", std::to_string(policy.max_age_seconds));
  return answer;
}

std::string parse_flag_list(std::string_view text, std::vector<std::string>& out) {
  text = trim_spaces(text);
  if (!text.empty() && text.front() == '[') {
    const auto list = nlohmann::json::parse(text, nullptr, false);
    if (list.is_discarded() || !list.is_array()) return str_cat("expected a JSON list of strings, found '", text, "'");
    for (const auto& item : list) {
      if (!item.is_string()) return str_cat("expected a JSON list of strings, found '", text, "'");
      if (std::string_view s = trim_spaces(item.get_ref<const std::string&>()); !s.empty()) out.emplace_back(s);
    }
    return {};
  }
  for (std::string& item : split_commas(text)) out.push_back(std::move(item));
  return {};
}

}  // namespace ds::server
