// KV event flags → KvEventsConfig. vLLM's JSON fields are taken by name; one this server has no
// use for is an error rather than silently ignored.
#include "kv_events_options.h"

#include <unistd.h>

#include <nlohmann/json.hpp>

namespace ds::app {

void add_kv_events_options(CLI::App* command, KvEventsOptions& options) {
  const char* group = "KV events (prefix-aware routers)";
  command->add_option("--kv-events-endpoint", options.endpoint,
                      "Publish vLLM's KV cache events (the prompt prefixes this server can resume) on this ZeroMQ endpoint, "
                      "e.g. tcp://*:5557 (bound) or tcp://router:5557 (connected). Default: off")
      ->group(group);
  command->add_option("--kv-events-replay-endpoint", options.replay_endpoint,
                      "ZeroMQ endpoint (bound) that replays missed event batches to a subscriber, e.g. tcp://*:5558")
      ->group(group);
  command->add_option("--kv-events-topic", options.topic,
                      "Topic of every event message (default kv@HOST:PORT@MODEL, the form llm-d reads; a wildcard --host "
                      "becomes the machine's name)")
      ->group(group);
  command->add_option("--kv-events-config", options.config_json,
                      "vLLM's form, as JSON: {\"enable_kv_cache_events\": true, \"publisher\": \"zmq\", \"endpoint\": ..., "
                      "\"replay_endpoint\": ..., \"topic\": ..., \"buffer_steps\": ..., \"hwm\": ...}")
      ->group(group);
}

std::string default_kv_events_topic(const std::string& host, int port, const std::string& model) {
  std::string name = host;
  if (host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]") {
    char buffer[256] = {};
    name = gethostname(buffer, sizeof(buffer) - 1) == 0 && buffer[0] ? buffer : "localhost";
  }
  return "kv@" + name + ":" + std::to_string(port) + "@" + model;
}

namespace {

// vLLM's --kv-events-config into `config`; false (and nothing set) when it leaves events off.
Result<bool> read_vllm_config(const std::string& text, kv_events::KvEventsConfig& config) {
  const auto json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded() || !json.is_object())
    return Status::errorf("--kv-events-config: expected a JSON object such as {\"enable_kv_cache_events\": true, "
                          "\"publisher\": \"zmq\", \"endpoint\": \"tcp://*:5557\"}, found '", text, "'");
  bool enabled = false;
  std::string publisher = "zmq";
  config.endpoint = "tcp://*:5557";  // vLLM's default
  for (const auto& [key, value] : json.items()) {
    auto expect = [&](bool ok, const char* what) -> Status {
      if (ok) return {};
      return Status::errorf("--kv-events-config: \"", key, "\" must be ", what, ", found ", value.dump());
    };
    if (key == "enable_kv_cache_events") {
      DS_TRY(expect(value.is_boolean(), "true or false"));
      enabled = value.get<bool>();
    } else if (key == "publisher") {
      DS_TRY(expect(value.is_string() && (value == "zmq" || value == "null"), "\"zmq\" or \"null\""));
      publisher = value.get<std::string>();
    } else if (key == "endpoint" || key == "replay_endpoint" || key == "topic") {
      DS_TRY(expect(value.is_string() || (key == "replay_endpoint" && value.is_null()), "a string"));
      std::string& field = key == "endpoint" ? config.endpoint : key == "topic" ? config.topic : config.replay_endpoint;
      field = value.is_null() ? "" : value.get<std::string>();
    } else if (key == "buffer_steps" || key == "hwm") {
      DS_TRY(expect(value.is_number_integer() && value.get<int64_t>() > 0 && value.get<int64_t>() <= (int64_t{1} << 30),
                    "a positive integer"));
      if (key == "buffer_steps") config.buffer_steps = value.get<int64_t>();
      else config.hwm = value.get<int>();
    } else {
      return Status::errorf("--kv-events-config: unknown field \"", key, "\" (this server reads enable_kv_cache_events, "
                            "publisher, endpoint, replay_endpoint, topic, buffer_steps, hwm)");
    }
  }
  return enabled && publisher == "zmq";
}

}  // namespace

Result<std::optional<kv_events::KvEventsConfig>> kv_events_config(const KvEventsOptions& options,
                                                                  const std::string& default_topic) {
  kv_events::KvEventsConfig config;
  if (!options.config_json.empty()) {
    if (!options.endpoint.empty() || !options.replay_endpoint.empty() || !options.topic.empty())
      return Status::error("--kv-events-config: give either it or --kv-events-endpoint / --kv-events-replay-endpoint / "
                           "--kv-events-topic, not both");
    DS_ASSIGN_OR_RETURN(const bool enabled, read_vllm_config(options.config_json, config));
    if (!enabled) return std::optional<kv_events::KvEventsConfig>();
  } else if (options.endpoint.empty()) {
    if (!options.replay_endpoint.empty() || !options.topic.empty())
      return Status::error("--kv-events-replay-endpoint and --kv-events-topic need --kv-events-endpoint");
    return std::optional<kv_events::KvEventsConfig>();
  } else {
    config.endpoint = options.endpoint;
    config.replay_endpoint = options.replay_endpoint;
    config.topic = options.topic;
  }
  if (config.topic.empty()) config.topic = default_topic;
  return std::optional<kv_events::KvEventsConfig>(std::move(config));
}

}  // namespace ds::app
