#include "server/request_log.h"

#include <cmath>

#include "util/human.h"
#include "util/log.h"

namespace ds::server {

void log_finished(const FinishedRequest& r) {
  const double decode_s = r.ttft_s >= 0 ? r.duration_s - r.ttft_s : 0.0;
  const double rate = decode_s > 0 && r.completion_tokens > 1 ? static_cast<double>(r.completion_tokens - r.choices) / decode_s : 0.0;
  std::string text = str_cat("request ", r.id, ": POST ", r.route, " 200", r.stream ? " stream" : "",
                             r.choices > 1 ? str_cat(", ", r.choices, " choices") : std::string(), ", prompt ",
                             r.prompt_tokens, " (", r.cached_tokens, " cached), generated ", r.completion_tokens);
  if (r.ttft_s >= 0) text += str_cat(", TTFT ", fixed_decimals(r.ttft_s, 3), " s");
  text += str_cat(", ", fixed_decimals(r.duration_s, 3), " s");
  if (rate > 0) text += str_cat(", ", fixed_decimals(rate, 1), " tok/s");
  text += str_cat(", finish ", r.finish);
  log::event(log::Level::info, "request", text,
             {{"id", r.id},
              {"method", std::string("POST")},
              {"route", std::string(r.route)},
              {"status", int64_t{200}},
              {"stream", r.stream},
              {"choices", r.choices},
              {"prompt_tokens", r.prompt_tokens},
              {"cached_tokens", r.cached_tokens},
              {"completion_tokens", r.completion_tokens},
              {"ttft_s", r.ttft_s >= 0 ? r.ttft_s : std::nan("")},  // null when no token came
              {"duration_s", r.duration_s},
              {"finish_reason", r.finish}});
}

void log_refused(std::string_view method, std::string_view path, int status, std::string_view message) {
  const std::string text = str_cat("request: ", method, " ", path, " ", status, ": ", message);
  log::event(log::Level::info, "request", text,
             {{"method", std::string(method)},
              {"route", std::string(path)},
              {"status", int64_t{status}},
              {"error", std::string(message)}});
}

}  // namespace ds::server
