// ServerMetrics rendering: gauges from the engine's counters, counters and histograms of our own.
#include "server/metrics.h"

#include <algorithm>

#include "util/process_memory.h"
#include "util/str_cat.h"

namespace ds::server {

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1) {}

void Histogram::observe(double seconds) {
  size_t i = 0;
  while (i < bounds_.size() && seconds > bounds_[i]) ++i;
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  sum_micros_.fetch_add(static_cast<uint64_t>(std::max(0.0, seconds) * 1e6), std::memory_order_relaxed);
}

void Histogram::render(std::string& out, const std::string& name, const std::string& help, const std::string& labels) const {
  out += str_cat("# HELP ", name, " ", help, "\n# TYPE ", name, " histogram\n");
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i].load(std::memory_order_relaxed);
    const std::string le = i < bounds_.size() ? str_cat(bounds_[i]) : std::string("+Inf");
    out += str_cat(name, "_bucket{", labels, ",le=\"", le, "\"} ", cumulative, "\n");
  }
  out += str_cat(name, "_sum{", labels, "} ", static_cast<double>(sum_micros_.load()) / 1e6, "\n");
  out += str_cat(name, "_count{", labels, "} ", cumulative, "\n");
}

namespace {

// vLLM's bucket bounds (seconds) for TTFT, inter-token latency and end-to-end latency.
std::vector<double> ttft_buckets() {
  return {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
}
std::vector<double> inter_token_buckets() {
  return {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0};
}
std::vector<double> e2e_buckets() {
  return {0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
}

std::string escape_label(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

void gauge(std::string& out, const std::string& name, const std::string& help, const std::string& labels, double value) {
  out += str_cat("# HELP ", name, " ", help, "\n# TYPE ", name, " gauge\n", name, "{", labels, "} ", value, "\n");
}
// Counts print as integers: a double through an ostream turns 1234567 into 1.23457e+06.
void counter(std::string& out, const std::string& name, const std::string& help, const std::string& labels, uint64_t value) {
  out += str_cat("# HELP ", name, " ", help, "\n# TYPE ", name, " counter\n", name, "{", labels, "} ", value, "\n");
}

}  // namespace

ServerMetrics::ServerMetrics(std::string model_name)
    : model_name_(std::move(model_name)),
      labels_(str_cat("model_name=\"", escape_label(model_name_), "\"")),
      ttft_(ttft_buckets()),
      inter_token_(inter_token_buckets()),
      e2e_(e2e_buckets()) {}

void ServerMetrics::count_finished(const char* reason) {
  const std::string r = reason;
  (r == "stop" ? finished_stop_ : r == "length" ? finished_length_ : r == "abort" ? finished_abort_ : finished_error_)
      .fetch_add(1, std::memory_order_relaxed);
}

void ServerMetrics::count_usage(int64_t prompt_tokens, int64_t completion_tokens, int64_t cached_tokens) {
  prompt_tokens_.fetch_add(static_cast<uint64_t>(prompt_tokens), std::memory_order_relaxed);
  cached_tokens_.fetch_add(static_cast<uint64_t>(cached_tokens), std::memory_order_relaxed);
  generation_tokens_.fetch_add(static_cast<uint64_t>(completion_tokens), std::memory_order_relaxed);
}

void ServerMetrics::count_refused_connection() { refused_connections_.fetch_add(1, std::memory_order_relaxed); }

void ServerMetrics::count_http(int status) {
  (status >= 500 ? http_5xx_ : status >= 400 ? http_4xx_ : http_2xx_).fetch_add(1, std::memory_order_relaxed);
}

std::string ServerMetrics::render(const EngineCounters& e, int64_t block_size) const {
  std::string out;
  const std::string& l = labels_;
  gauge(out, "vllm:num_requests_running", "Requests in the running batch.", l, static_cast<double>(e.running));
  gauge(out, "vllm:num_requests_waiting", "Requests waiting for capacity.", l, static_cast<double>(e.waiting));
  const double usage = e.num_blocks > 0 ? static_cast<double>(e.blocks_used) / static_cast<double>(e.num_blocks) : 0.0;
  gauge(out, "vllm:kv_cache_usage_perc", "KV-cache usage, a fraction in [0, 1] (1 = full).", l, usage);
  gauge(out, "vllm:gpu_cache_usage_perc", "Alias of vllm:kv_cache_usage_perc for older gateways (this cache is in CPU memory).", l, usage);
  out += str_cat("# HELP vllm:cache_config_info Cache configuration.\n# TYPE vllm:cache_config_info gauge\n",
                 "vllm:cache_config_info{", l, ",block_size=\"", block_size, "\",num_gpu_blocks=\"", e.num_blocks,
                 "\",num_state_slots=\"", e.num_slots, "\"} 1\n");
  counter(out, "vllm:prompt_tokens_total", "Prompt tokens of served requests (the sum of usage.prompt_tokens).", l,
          prompt_tokens_.load());
  counter(out, "vllm:generation_tokens_total", "Tokens generated for clients (the sum of usage.completion_tokens).", l,
          generation_tokens_.load());
  counter(out, "vllm:num_preemptions_total", "Preemptions (a request's cache freed to be recomputed later).", l,
          static_cast<uint64_t>(e.preemptions));
  // Like the token counters, from the usage clients were told (so the warm-up is not in them).
  counter(out, "vllm:prefix_cache_queries_total",
          "Prompt tokens looked up in the prefix cache (the sum of usage.prompt_tokens while it is on).", l,
          e.snapshot_capacity > 0 ? prompt_tokens_.load() : 0);
  counter(out, "vllm:prefix_cache_hits_total",
          "Prompt tokens found in the prefix cache (the sum of usage.prompt_tokens_details.cached_tokens).", l,
          cached_tokens_.load());
  // vLLM v0's gauge, which some gateways' load monitors still read (smg): the same counts as a ratio.
  const uint64_t queried = e.snapshot_capacity > 0 ? prompt_tokens_.load() : 0;
  gauge(out, "vllm:gpu_prefix_cache_hit_rate",
        "Share of prompt tokens found in the prefix cache since start (vllm:prefix_cache_hits_total / queries_total; this cache is in CPU memory).",
        l, queried > 0 ? static_cast<double>(cached_tokens_.load()) / static_cast<double>(queried) : 0.0);
  gauge(out, "deltaserve_prefix_cache_blocks", "KV blocks holding a keyed prompt prefix (shared or evictable).", l,
        static_cast<double>(e.cached_blocks));
  counter(out, "deltaserve_prefix_cache_block_evictions_total", "Cached KV blocks reused for other tokens.", l,
          static_cast<uint64_t>(e.block_evictions));
  gauge(out, "deltaserve_prefix_cache_snapshots", "DeltaNet snapshots held by the prefix cache.", l,
        static_cast<double>(e.snapshots));
  gauge(out, "deltaserve_prefix_cache_snapshot_capacity", "DeltaNet snapshots the prefix cache can hold.", l,
        static_cast<double>(e.snapshot_capacity));
  gauge(out, "deltaserve_prefix_cache_snapshot_bytes", "Bytes of the DeltaNet snapshots held (states and their KV tail blocks).", l,
        static_cast<double>(e.snapshot_bytes));
  counter(out, "deltaserve_prefix_cache_snapshot_evictions_total", "DeltaNet snapshots evicted (least recently used).", l,
          static_cast<uint64_t>(e.snapshot_evictions));
  if (e.speculative_tokens > 0) {  // as vLLM: only with speculative decoding configured
    counter(out, "vllm:spec_decode_num_drafts_total", "Speculative decoding rounds that verified drafts.", l,
            static_cast<uint64_t>(e.spec_drafts));
    counter(out, "vllm:spec_decode_num_draft_tokens_total", "Draft tokens verified.", l,
            static_cast<uint64_t>(e.spec_draft_tokens));
    counter(out, "vllm:spec_decode_num_accepted_tokens_total", "Draft tokens accepted (emitted as drafted).", l,
            static_cast<uint64_t>(e.spec_accepted_tokens));
    out += "# HELP vllm:spec_decode_num_accepted_tokens_per_pos_total Rounds whose draft at this position (0: the first) "
           "was accepted.\n# TYPE vllm:spec_decode_num_accepted_tokens_per_pos_total counter\n";
    const auto positions = std::min<int64_t>(e.speculative_tokens, static_cast<int64_t>(e.spec_accepted_per_position.size()));
    for (int64_t j = 0; j < positions; ++j)
      out += str_cat("vllm:spec_decode_num_accepted_tokens_per_pos_total{", l, ",position=\"", j, "\"} ",
                     e.spec_accepted_per_position[static_cast<size_t>(j)], "\n");
  }
  out += "# HELP vllm:request_success_total Finished requests by finish reason.\n# TYPE vllm:request_success_total counter\n";
  for (const auto& [reason, count] : {std::pair{"stop", &finished_stop_}, std::pair{"length", &finished_length_},
                                      std::pair{"abort", &finished_abort_}, std::pair{"error", &finished_error_}})
    out += str_cat("vllm:request_success_total{", l, ",finished_reason=\"", reason, "\"} ", count->load(), "\n");
  ttft_.render(out, "vllm:time_to_first_token_seconds", "Time to first token.", l);
  inter_token_.render(out, "vllm:inter_token_latency_seconds", "Time between consecutive output tokens.", l);
  inter_token_.render(out, "vllm:time_per_output_token_seconds", "Alias of vllm:inter_token_latency_seconds (older vLLM name).", l);
  e2e_.render(out, "vllm:e2e_request_latency_seconds", "End-to-end request latency.", l);
  out += "# HELP deltaserve_http_responses_total API responses by status class (not /health, /ready, /metrics).\n# TYPE deltaserve_http_responses_total counter\n";
  out += str_cat("deltaserve_http_responses_total{code=\"2xx\"} ", http_2xx_.load(), "\n");
  out += str_cat("deltaserve_http_responses_total{code=\"4xx\"} ", http_4xx_.load(), "\n");
  out += str_cat("deltaserve_http_responses_total{code=\"5xx\"} ", http_5xx_.load(), "\n");
  counter(out, "deltaserve_http_refused_connections_total",
          "Connections answered 503 + Retry-After because every HTTP thread was busy and the waiting queue full.", l,
          refused_connections_.load());
  out += str_cat("# HELP process_resident_memory_bytes Resident memory size in bytes.\n# TYPE process_resident_memory_bytes gauge\n",
                 "process_resident_memory_bytes ", resident_memory_bytes(), "\n");
  return out;
}

}  // namespace ds::server
