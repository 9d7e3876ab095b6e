// One line per API request for the operator: what a finished generation did (tokens, times, finish
// reasons) or why a request was refused. Never the prompt or the output text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ds::server {

struct FinishedRequest {
  std::string id;            // the response's id (chatcmpl-…, cmpl-…)
  std::string_view route;    // "/v1/chat/completions" or "/v1/completions"
  bool stream = false;
  int64_t choices = 1;
  int64_t prompt_tokens = 0, cached_tokens = 0, completion_tokens = 0;
  double ttft_s = -1.0;      // first token of any choice after arrival; < 0: none came
  double duration_s = 0.0;   // arrival to the last byte
  std::string finish;        // the choices' finish reasons, comma-separated (stop, length, abort, error)
};

void log_finished(const FinishedRequest& r);
// A request answered with an error status before (or instead of) generating; `message` is the
// error the client got.
void log_refused(std::string_view method, std::string_view path, int status, std::string_view message);

}  // namespace ds::server
