// `serve`'s KV event flags: --kv-events-endpoint, --kv-events-replay-endpoint, --kv-events-topic,
// or vLLM's --kv-events-config JSON (so an llm-d manifest written for vLLM carries over).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "kv_events/zmq_event_publisher.h"
#include "util/status.h"

namespace ds::app {

struct KvEventsOptions {
  std::string endpoint, replay_endpoint, topic;
  std::string config_json;  // --kv-events-config
};

void add_kv_events_options(CLI::App* command, KvEventsOptions& options);

// The publisher's configuration, or none when KV events are off (the default). A topic not given
// is `default_topic`. Errors name the flag or JSON field and what was expected.
Result<std::optional<kv_events::KvEventsConfig>> kv_events_config(const KvEventsOptions& options,
                                                                  const std::string& default_topic);

// llm-d's topic form, kv@<host>:<port>@<model>; a wildcard listening host (0.0.0.0, ::) becomes
// the machine's name (in Kubernetes, the pod's).
std::string default_kv_events_topic(const std::string& host, int port, const std::string& model);

}  // namespace ds::app
