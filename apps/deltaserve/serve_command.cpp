// `deltaserve serve --model DIR [--host H] [--port P] ...`: the OpenAI-compatible server. It checks its
// access flags and takes its port first (a busy port fails at once, before any model load; /health and /ready answer during
// start-up), loads and warms the model, then goes ready.
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "model_argument.h"
#include "cli_errors.h"
#include "commands.h"
#include "default_assets.h"
#include "engine/qwen35_step_model.h"
#include "engine_options.h"
#include "model_identity.h"
#include "io/generation_config.h"
#include "io/gguf_set.h"
#include "kv_events/prefix_announcer.h"
#include "kv_events_options.h"
#include "model/model_loader.h"
#include "run_options.h"
#include "serve_options.h"
#include "server/activity_log.h"
#include "server/http_server.h"
#include "server/openai_service.h"
#include "tokenizer/chat_template.h"
#include "util/log.h"
#include "util/str_cat.h"
#include "vision_options.h"

namespace ds::app {
namespace {

// The name the API serves without --served-model-name: the directory's name, or a GGUF file's
// without ".gguf" and a split set's "-0000i-of-0000N".
std::string default_model_name(const std::string& model) {
  std::string name = std::filesystem::path(model).filename().string();
  if (!is_gguf_path(name)) return name;
  if (const std::optional<SplitName> split = parse_split_name(name)) return split->stem;
  return name.substr(0, name.size() - 5);
}

struct ServeOptions {
  std::string model_dir, served_name, template_kwargs = "{}", test_script;
  double log_stats_interval = 10.0;  // seconds; 0: no periodic engine line
  double shutdown_timeout = 20.0;    // seconds a stop waits for requests in flight
  bool no_ui = false;
  server::HttpOptions http;
  ServeAccessOptions access;
  RunOptions run;
  EngineCliOptions engine;
  KvEventsOptions kv_events;
  VisionCliOptions vision;
};

server::SamplingDefaults sampling_defaults(const GenerationConfig& g) {
  server::SamplingDefaults d;
  if (g.temperature) d.temperature = static_cast<float>(*g.temperature);
  if (g.top_p) d.top_p = static_cast<float>(*g.top_p);
  if (g.top_k) d.top_k = *g.top_k;
  if (g.min_p) d.min_p = static_cast<float>(*g.min_p);
  if (g.repetition_penalty) d.repetition_penalty = static_cast<float>(*g.repetition_penalty);
  return d;
}

using LogitsHook = std::function<void(uint64_t, std::span<const int32_t>, std::span<const int32_t>, std::span<float>)>;

// --test-script FILE: [{"prompt_contains": TEXT, "reply": TEXT}, ...]. A request whose prompt
// contains TEXT generates exactly the tokens of `reply`, then an end-of-sequence token, by forcing
// the logits; everything after the logits (sampling, detokenizing, parsing, streaming) is real.
Result<LogitsHook> test_hook(
    const std::string& path, const Tokenizer& tokenizer, int32_t eos) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const auto script = nlohmann::json::parse(text.str(), nullptr, false);
  if (!in || script.is_discarded() || !script.is_array()) return Status::errorf("--test-script ", path, ": expected a JSON list");
  struct Rule {
    std::string needle;
    std::vector<int32_t> reply;
  };
  auto rules = std::make_shared<std::vector<Rule>>();
  for (const auto& item : script) {
    if (!item.is_object() || !item.contains("prompt_contains") || !item.contains("reply"))
      return Status::errorf("--test-script ", path, ": expected {\"prompt_contains\", \"reply\"} objects");
    DS_ASSIGN_OR_RETURN(std::vector<int32_t> reply, tokenizer.encode(item["reply"].get<std::string>()));
    rules->push_back({item["prompt_contains"].get<std::string>(), std::move(reply)});
  }
  auto decided = std::make_shared<std::unordered_map<uint64_t, int>>();  // request → rule (-1: none); engine thread only
  return LogitsHook([rules, decided, &tokenizer, eos](uint64_t id, std::span<const int32_t> prompt, std::span<const int32_t> generated,
                                           std::span<float> logits) {
    auto it = decided->find(id);
    if (it == decided->end()) {
      const std::string text = tokenizer.decode(prompt);
      int rule = -1;
      for (size_t i = 0; i < rules->size() && rule < 0; ++i)
        if (text.find((*rules)[i].needle) != std::string::npos) rule = static_cast<int>(i);
      it = decided->emplace(id, rule).first;
    }
    if (it->second < 0) return;
    const auto& reply = (*rules)[static_cast<size_t>(it->second)].reply;
    const int32_t forced = generated.size() < reply.size() ? reply[generated.size()] : eos;
    for (float& l : logits) l = -1e30f;
    logits[static_cast<size_t>(forced)] = 0.0f;
  });
}

// SIGINT / SIGTERM: stop admitting (/ready and new API requests answer 503 at once), let the
// requests in flight finish for up to `timeout` seconds (a second signal cuts the wait short),
// abort what still runs with its clients told why, then stop the HTTP server.
void drain_and_stop(server::HttpServer& http, const sigset_t& signals, int signal_number, double timeout) {
  using Clock = std::chrono::steady_clock;
  server::Lifecycle& lifecycle = http.lifecycle();
  lifecycle.drain();
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::milliseconds(static_cast<int64_t>(timeout * 1000));
  log::info("serve: signal ", signal_number, ": draining — /ready and new requests answer 503; ", lifecycle.in_flight(),
            " requests in flight, waiting up to ", timeout, " s for them (--shutdown-timeout)");
  bool cut_short = false;
  while (!lifecycle.wait_idle(std::min(deadline, Clock::now() + std::chrono::milliseconds(100))) && Clock::now() < deadline) {
    const timespec now{0, 0};
    if (sigtimedwait(&signals, nullptr, &now) > 0) {
      cut_short = true;
      break;
    }
  }
  if (const int64_t left = lifecycle.in_flight(); left > 0) {
    log::warn("serve: ", left, " requests still running ", cut_short ? "at a second signal" : "after --shutdown-timeout",
              ": aborting them");
    lifecycle.abort_in_flight(cut_short ? "the server was stopped before this request finished"
                                        : str_cat("the server shut down before this request finished (--shutdown-timeout ",
                                                  timeout, " s)"));
    lifecycle.wait_idle(Clock::now() + std::chrono::seconds(5));  // their clients get the abort
  } else {
    log::info("serve: drained in ", std::chrono::duration<double>(Clock::now() - start).count(), " s");
  }
  http.stop();
}

int run_serve(ServeOptions options) {
  signal(SIGPIPE, SIG_IGN);  // a vanished client is a failed write, not a dead server
  // SIGINT / SIGTERM are taken by one thread (sigwait) that stops the server cleanly.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto engine_config = engine_options(options.engine);
  if (!engine_config.ok()) return report_error(engine_config.status());
  auto default_kwargs = nlohmann::ordered_json::parse(options.template_kwargs, nullptr, false);
  if (default_kwargs.is_discarded() || !default_kwargs.is_object())
    return report_error(Status::errorf("--default-template-kwargs: expected a JSON object, found \"", options.template_kwargs, "\""));

  // Access flags are checked before the port is taken: a bad key file or template fails at once.
  auto keys = api_keys(options.access);
  if (!keys.ok()) return report_error(keys.status());
  options.http.api_keys = *keys;
  auto cors = cors_policy(options.access);
  if (!cors.ok()) return report_error(cors.status());
  options.http.cors = *cors;
  auto media = media_options(options.vision);
  if (!media.ok()) return report_error(media.status());
  std::string template_override;
  if (!options.access.chat_template.empty()) {
    auto source = chat_template_override(options.access.chat_template);
    if (!source.ok()) return report_error(source.status());
    template_override = *source;
  }

  const std::string served_name = options.served_name.empty() ? default_model_name(options.model_dir) : options.served_name;
  server::ServerMetrics metrics(served_name);
  if (!options.no_ui) options.http.chat_page = chat_page();
  options.http.version = DELTASERVE_VERSION;
  server::HttpServer http(options.http, metrics);
  if (Status bound = http.bind(); !bound.ok()) return report_error(bound);
  // KV events: the sockets are opened before the model loads, so a busy endpoint fails at once.
  auto events_config = kv_events_config(options.kv_events, default_kv_events_topic(options.http.host, http.port(), served_name));
  if (!events_config.ok()) return report_error(events_config.status());
  std::unique_ptr<kv_events::ZmqEventPublisher> publisher;
  if (*events_config) {
    auto opened = kv_events::ZmqEventPublisher::open(**events_config);
    if (!opened.ok()) return report_error(opened.status());
    publisher = std::move(*opened);
    log::info("serve: KV events on ", publisher->config().endpoint, " topic \"", publisher->config().topic, "\"",
              publisher->config().replay_endpoint.empty() ? "" : str_cat(", replay on ", publisher->config().replay_endpoint));
  }
  std::thread listener([&] { http.serve(); });
  std::atomic<bool> failed{false};
  std::thread stopper([&] {
    int signal_number = 0;
    sigwait(&signals, &signal_number);
    if (failed) return http.stop();
    drain_and_stop(http, signals, signal_number, options.shutdown_timeout);
  });
  auto fail = [&](const Status& status) {  // start-up failed: stop the listener, report
    failed = true;
    pthread_kill(stopper.native_handle(), SIGTERM);
    stopper.join();
    listener.join();
    return report_error(status);
  };
  if (options.http.api_keys.enabled())
    log::info("serve: API keys on (", options.http.api_keys.count(), " accepted); /health, /ready, /version and /metrics stay open");
  if (options.http.cors.enabled()) log::info("serve: CORS on for ", options.http.cors.origins.size(), " allowed origin(s)");
  if (!template_override.empty()) log::info("serve: chat template from --chat-template");
  log::info("serve: listening on http://", options.http.host, ":", http.port(), " (loading the model; /ready answers 503 until done)");

  auto tokenizer = Tokenizer::load_dir(options.model_dir);
  if (!tokenizer.ok()) return fail(tokenizer.status().with_context("serve needs the tokenizer"));
  use_message_start_token(*engine_config, *tokenizer);
  auto generation = load_generation_config(options.model_dir);
  if (!generation.ok()) return fail(generation.status());
  server::ServedModel model;
  model.name = options.served_name.empty() ? default_model_name(options.model_dir) : options.served_name;
  model.tokenizer = &*tokenizer;
  model.default_template_kwargs = default_kwargs;
  model.defaults = sampling_defaults(*generation);
  log::info("serve: sampling defaults (", options.model_dir.ends_with(".gguf") ? "general.sampling.*" : "generation_config.json",
            "): ", sampling_defaults_text(*generation), "; a request's own values win");
  model.default_max_tokens = options.access.default_max_tokens;
  auto source = template_override.empty() ? load_chat_template(options.model_dir) : Result<std::string>(template_override);
  if (source.ok()) {
    model.chat_template = *source;
    auto special = load_special_tokens(options.model_dir);
    if (!special.ok()) return fail(special.status());
    model.special_tokens = *special;
  } else {
    log::warn("serve: no chat template (", source.status().message(), "); /v1/chat/completions will answer 400");
  }
  const auto backend = make_backend(options.run);
  auto loaded = load_model(options.model_dir, *backend, compute_mode(options.run),
                           weights_choice(options.run), thread_count(options.run));
  if (!loaded.ok()) return fail(loaded.status());
  engine_config->eos_token_ids = stop_token_ids(loaded->config.text, *generation);
  if (!options.test_script.empty()) {
    if (engine_config->eos_token_ids.empty()) return fail(Status::error("--test-script needs an end-of-sequence id"));
    auto hook = test_hook(options.test_script, *tokenizer, engine_config->eos_token_ids.front());
    if (!hook.ok()) return fail(hook.status());
    engine_config->logits_hook = *hook;
    log::warn("serve: --test-script ", options.test_script, ": scripted replies are forced (testing only)");
  }
  auto kv_dtype = kv_cache_dtype(options.engine, *loaded->model);
  if (!kv_dtype.ok()) return fail(kv_dtype.status());
  if (Status identified = identify_model(*engine_config, options.model_dir, *loaded, *backend); !identified.ok())
    return fail(identified);
  Qwen35StepModel step_model(*loaded->model, *kv_dtype, engine_config->speculative_tokens > 0);
  auto drafter = speculative_drafter(*engine_config, step_model, options.engine);  // outlives the engine
  if (!drafter.ok()) return fail(drafter.status());
  const std::unique_ptr<VisionModel> vision = load_vision_if_present(*loaded, options.model_dir, thread_count(options.run), model.vision_refusal);
  if (vision) step_model.attach_vision(*vision);
  model.vision = vision.get();
  model.media = *media;
  std::unique_ptr<kv_events::PrefixAnnouncer> announcer;  // outlives the engine, which tells it what the cache can resume
  if (publisher) {
    announcer = std::make_unique<kv_events::PrefixAnnouncer>(*publisher, step_model.cache_geometry().block_size);
    engine_config->prefix_observer = announcer.get();
  }
  auto engine = Engine::start(step_model, *engine_config);
  if (!engine.ok()) return fail(engine.status());
  log_engine_limits(**engine, *engine_config);
  {  // Warm-up: one short request through the whole path brings the weights in before going ready.
    SamplingParams warm;
    warm.max_tokens = 2;
    warm.ignore_eos = true;
    auto stream = (*engine)->submit({0, 1, 2, 3}, warm);
    if (!stream.ok()) return fail(stream.status());
    while ((*stream)->next()) {
    }
  }
  server::OpenAiService service(**engine, model, metrics);
  http.set_service(&service, engine->get());
  log::info("serve: ready — model \"", model.name, "\" at http://", options.http.host, ":", http.port(), "/v1",
            options.no_ui ? "" : str_cat("; chat page at http://", options.http.host, ":", http.port(), "/"));
  std::optional<server::ActivityLog> activity;
  if (options.log_stats_interval > 0)
    activity.emplace(**engine, std::chrono::milliseconds(static_cast<int64_t>(options.log_stats_interval * 1000)));
  listener.join();
  http.set_service(nullptr, nullptr);
  stopper.join();
  if (!engine_config->prefix_cache_dir.empty()) log::info("serve: writing the prefix cache to ", engine_config->prefix_cache_dir);
  activity.reset();
  engine->reset();  // ends the engine thread and writes the prefix cache (--prefix-cache-dir)
  log::info("serve: stopped");
  return 0;
}

}  // namespace

CommandRunner add_serve_command(CLI::App& app) {
  auto options = std::make_shared<ServeOptions>();
  CLI::App* command = app.add_subcommand("serve", "Serve the OpenAI-compatible API (chat, completions, models, tokenize, metrics)");
  add_model_option(command, options->model_dir, "Checkpoint directory, or a GGUF file (FILE.gguf, or any part of a split set)")->required();
  command->add_option("--host", options->http.host, "Address to listen on")->capture_default_str();
  command->add_option("--port", options->http.port, "Port to listen on (0: any free port, logged)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  command->add_option("--served-model-name", options->served_name, "Model name clients send (default: the directory's name, or the GGUF file's without .gguf and the split part)");
  command->add_option("--default-template-kwargs", options->template_kwargs,
                      "Chat-template kwargs for every request, as JSON (e.g. '{\"enable_thinking\": false}'); requests override them")
      ->capture_default_str();
  command->add_option("--http-threads", options->http.threads, "HTTP threads kept for connections (each streaming client holds one)")
      ->check(CLI::Range(4, 4096))
      ->capture_default_str();
  command->add_option("--http-queue", options->http.max_waiting,
                      "Threads started on demand for connections beyond --http-threads (a connection never waits behind a "
                      "stream); beyond both a connection is answered 503 with Retry-After")
      ->check(CLI::Range(0, 16384))
      ->capture_default_str();
  command->add_option("--log-stats-interval", options->log_stats_interval,
                      "Seconds between the engine lines logged while requests run (throughput, running / waiting, KV "
                      "and snapshot use, prefix-cache hit rate); 0: none. Each finished request is logged too (-q: neither)")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  command->add_option("--shutdown-timeout", options->shutdown_timeout,
                      "Seconds a stop (SIGTERM, SIGINT) lets requests in flight finish; /ready and new requests answer 503 "
                      "from the signal on, and what still runs after this is aborted, its clients told why")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  command->add_flag("--no-ui", options->no_ui, "Do not serve the chat page at / (the API routes stay)");
  command->add_option("--test-script", options->test_script, "Testing only: force scripted replies (JSON list)")->group("");
  add_serve_access_options(command, options->access);
  add_run_options(command, options->run);
  add_engine_options(command, options->engine);
  add_kv_events_options(command, options->kv_events);
  add_vision_options(command, options->vision);
  return [options] { return run_serve(*options); };
}

}  // namespace ds::app
