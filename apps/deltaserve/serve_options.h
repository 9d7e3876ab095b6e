// `serve`'s access and request-default flags, named as vLLM names them: --api-key / --api-key-file,
// --allowed-origins / --allowed-methods / --allowed-headers / --allow-credentials,
// --chat-template, and --default-max-tokens (llama.cpp: --n-predict).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "server/api_keys.h"
#include "server/cors.h"
#include "util/status.h"

namespace ds::app {

struct ServeAccessOptions {
  std::vector<std::string> api_keys;
  std::string api_key_file;
  std::vector<std::string> allowed_origins, allowed_methods, allowed_headers;
  bool allow_credentials = false;
  std::string chat_template;          // a file, or the template itself
  int64_t default_max_tokens = 8192;  // 0: the rest of the context
};

void add_serve_access_options(CLI::App* command, ServeAccessOptions& options);

// --api-key and --api-key-file together; when neither is given, DELTASERVE_API_KEY, else VLLM_API_KEY.
Result<server::ApiKeys> api_keys(const ServeAccessOptions& options);
Result<server::CorsPolicy> cors_policy(const ServeAccessOptions& options);

// --chat-template: an existing file's text, else the argument itself when it holds Jinja tags
// ({{ or {%), as vLLM accepts it; either must parse. Errors name the file and the parser's message.
Result<std::string> chat_template_override(const std::string& argument);

}  // namespace ds::app
