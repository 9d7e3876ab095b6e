// `serve`'s access and request-default flags → the server's ApiKeys, CorsPolicy and template.
#include "serve_options.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tokenizer/jinja/parser.h"

namespace ds::app {

void add_serve_access_options(CLI::App* command, ServeAccessOptions& options) {
  const char* group = "Access and request defaults";
  command->add_option("--api-key", options.api_keys,
                      "Require 'Authorization: Bearer KEY' on every route but /health, /ready and /metrics (repeat for several "
                      "keys). Without --api-key and --api-key-file, the key comes from DELTASERVE_API_KEY, else VLLM_API_KEY")
      ->group(group);
  command->add_option("--api-key-file", options.api_key_file, "Accepted API keys, one per line (added to --api-key)")->group(group);
  command->add_option("--allowed-origins", options.allowed_origins,
                      "Browser origins allowed to call the API (CORS), e.g. http://localhost:3000 or '*'; a JSON list or "
                      "comma-separated. None (the default): CORS off")
      ->group(group);
  command->add_option("--allowed-methods", options.allowed_methods, "Methods a CORS preflight may ask for (default: '*', any)")
      ->group(group);
  command->add_option("--allowed-headers", options.allowed_headers,
                      "Headers a CORS preflight may ask for (default: '*', any, Authorization and Content-Type included)")
      ->group(group);
  command->add_flag("--allow-credentials", options.allow_credentials, "CORS: allow cookies and credentials (names the origin, never '*')")
      ->group(group);
  command->add_option("--chat-template", options.chat_template,
                      "Chat template replacing the checkpoint's: a Jinja file, or the template text itself")
      ->group(group);
  command->add_option("--default-max-tokens,--n-predict", options.default_max_tokens,
                      "Tokens a request may generate when it sends no max_tokens / max_completion_tokens (0: the rest of the "
                      "context, as vLLM); an explicit max_tokens may go up to the context limit")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30))
      ->capture_default_str()
      ->group(group);
}

Result<server::ApiKeys> api_keys(const ServeAccessOptions& options) {
  std::vector<std::string> keys;
  for (const std::string& key : options.api_keys) {
    if (key.empty()) return Status::error("--api-key: expected a key, found an empty text");
    keys.push_back(key);
  }
  if (!options.api_key_file.empty()) {
    DS_ASSIGN_OR_RETURN(std::vector<std::string> from_file, server::read_api_key_file(options.api_key_file));
    keys.insert(keys.end(), from_file.begin(), from_file.end());
  }
  if (keys.empty()) {
    for (const char* name : {"DELTASERVE_API_KEY", "VLLM_API_KEY"}) {
      const char* value = std::getenv(name);
      if (value && *value) {
        keys.emplace_back(value);
        break;
      }
    }
  }
  return server::ApiKeys(std::move(keys));
}

Result<server::CorsPolicy> cors_policy(const ServeAccessOptions& options) {
  server::CorsPolicy policy;
  auto read_list = [](const char* flag, const std::vector<std::string>& values, std::vector<std::string>& out) -> Status {
    for (const std::string& value : values)
      if (std::string error = server::parse_flag_list(value, out); !error.empty()) return Status::errorf(flag, ": ", error);
    return {};
  };
  DS_TRY(read_list("--allowed-origins", options.allowed_origins, policy.origins));
  if (!options.allowed_methods.empty()) {
    policy.methods.clear();
    DS_TRY(read_list("--allowed-methods", options.allowed_methods, policy.methods));
  }
  if (!options.allowed_headers.empty()) {
    policy.headers.clear();
    DS_TRY(read_list("--allowed-headers", options.allowed_headers, policy.headers));
  }
  for (const std::string& origin : policy.origins)
    if (origin != "*" && origin.find("://") == std::string::npos)
      return Status::errorf("--allowed-origins: expected '*' or scheme://host[:port], found '", origin, "'");
  policy.allow_credentials = options.allow_credentials;
  return policy;
}

Result<std::string> chat_template_override(const std::string& argument) {
  std::string source, where;
  std::error_code error;
  if (std::filesystem::is_regular_file(argument, error)) {
    std::ifstream in(argument);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) return Status::errorf("--chat-template ", argument, ": cannot be read");
    source = text.str();
    where = argument;
  } else if (argument.find("{{") != std::string::npos || argument.find("{%") != std::string::npos) {
    source = argument;
    where = "(the template given inline)";
  } else {
    return Status::errorf("--chat-template ", argument, ": no such file, and not a template given inline (no {{ or {%)");
  }
  if (auto parsed = jinja::parse_template(source); !parsed.ok())
    return Status::errorf("--chat-template ", where, ": ", parsed.status().message());
  return source;
}

}  // namespace ds::app
