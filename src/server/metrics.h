// ServerMetrics: Prometheus text for /metrics with vLLM's (v1 engine) metric names and meanings, so
// inference gateways (Gateway API Inference Extension, llm-d, AIBrix, production-stack) scrape it
// without configuration. Everything is read from atomics: a scrape never waits for an engine step.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace ds::server {

// A Prometheus histogram over fixed bucket bounds (seconds), lock-free.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double seconds);
  // Appends the _bucket / _sum / _count lines of `name` with `labels` ("model_name=\"x\"").
  void render(std::string& out, const std::string& name, const std::string& help, const std::string& labels) const;

 private:
  std::vector<double> bounds_;
  std::vector<std::atomic<uint64_t>> counts_;  // [bounds + 1] (the last is +Inf), not cumulative
  std::atomic<uint64_t> sum_micros_{0};
};

class ServerMetrics {
 public:
  explicit ServerMetrics(std::string model_name);

  void observe_ttft(double s) { ttft_.observe(s); }
  void observe_inter_token(double s) { inter_token_.observe(s); }
  void observe_e2e(double s) { e2e_.observe(s); }
  void count_finished(const char* finish_reason);  // stop | length | abort | error
  // One response's `usage` (or what it would say, for a stream without include_usage or a
  // client that left): the token counters are the sum of these, so work no client asked for
  // (the start-up warm-up) is not in them.
  // One response's usage: its prompt, completion and cached prompt tokens.
  void count_usage(int64_t prompt_tokens, int64_t completion_tokens, int64_t cached_tokens);
  void count_http(int status);
  void count_refused_connection();  // answered 503: every HTTP thread busy, the queue full

  std::string render(const EngineCounters& engine, int64_t block_size) const;

 private:
  std::string model_name_, labels_;
  Histogram ttft_, inter_token_, e2e_;
  std::atomic<uint64_t> finished_stop_{0}, finished_length_{0}, finished_abort_{0}, finished_error_{0};
  std::atomic<uint64_t> prompt_tokens_{0}, generation_tokens_{0}, cached_tokens_{0};
  std::atomic<uint64_t> http_2xx_{0}, http_4xx_{0}, http_5xx_{0}, refused_connections_{0};
};

}  // namespace ds::server
