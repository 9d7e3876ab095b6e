// HttpServer: routes → OpenAiService; every error is an OpenAI error envelope, every exception a 500,
// and a generation streams through a chunked content provider that notices a vanished client.
#include "server/http_server.h"

#include <httplib.h>

#include <chrono>
#include <thread>

#include "util/log.h"

namespace ds::server {
namespace {

void send_error(httplib::Response& res, const ApiError& error) {
  res.status = error.status;
  res.set_content(error.body(), "application/json");
}

// Writes a generation's bytes into cpp-httplib's chunked sink.
class SinkWriter : public ResponseWriter {
 public:
  explicit SinkWriter(httplib::DataSink& sink) : sink_(sink) {}
  bool write(std::string_view data) override { return sink_.is_writable() && sink_.write(data.data(), data.size()); }

 private:
  httplib::DataSink& sink_;
};

}  // namespace

HttpServer::HttpServer(const HttpOptions& options, ServerMetrics& metrics)
    : options_(options), metrics_(metrics), http_(std::make_unique<httplib::Server>()) {
  const int threads = options_.threads;
  http_->new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  http_->set_payload_max_length(options_.max_body_bytes);
  http_->set_keep_alive_max_count(1000);
  add_routes();
}

HttpServer::~HttpServer() { stop(); }

Status HttpServer::bind() {
  port_ = options_.port == 0 ? http_->bind_to_any_port(options_.host.c_str()) : options_.port;
  if (options_.port != 0 && !http_->bind_to_port(options_.host.c_str(), options_.port)) port_ = -1;
  if (port_ < 0)
    return Status::errorf("cannot listen on ", options_.host, ":", options_.port, " (address in use, or not an address of this machine)");
  return {};
}

void HttpServer::serve() {
  {
    std::lock_guard lock(state_mutex_);
    if (stop_requested_) return;
    serving_ = true;
  }
  http_->listen_after_bind();
  std::lock_guard lock(state_mutex_);
  serving_ = false;
}

// cpp-httplib's stop() acts only once its accept loop runs (is_running()): a stop that came between
// serve()'s start and that moment was lost, and the listener never returned (a start-up error
// right after bind hung `serve` on a loaded machine). So this waits for the loop, stops it once
// (a second httplib stop would find its socket gone), and waits for serve() to return.
void HttpServer::stop() {
  {
    std::lock_guard lock(state_mutex_);
    stop_requested_ = true;
  }
  for (bool stopped = false;; std::this_thread::sleep_for(std::chrono::milliseconds(1))) {
    {
      std::lock_guard lock(state_mutex_);
      if (!serving_) return;
    }
    if (!stopped && http_->is_running()) {
      http_->stop();
      stopped = true;
    }
  }
}

void HttpServer::set_service(OpenAiService* service, Engine* engine) {
  engine_.store(engine);
  service_.store(service);
}

void HttpServer::add_routes() {
  httplib::Server& s = *http_;
  auto not_ready = [](httplib::Response& res) {
    send_error(res, ApiError{503, "the model is still loading; retry when GET /ready answers 200", ""});
  };
  s.Get("/health", [](const httplib::Request&, httplib::Response& res) { res.set_content("{\"status\": \"ok\"}", "application/json"); });
  s.Get("/ready", [this, not_ready](const httplib::Request&, httplib::Response& res) {
    if (!service_.load()) return not_ready(res);
    res.set_content("{\"status\": \"ready\"}", "application/json");
  });
  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    Engine* engine = engine_.load();
    res.set_content(metrics_.render(engine ? engine->counters() : EngineCounters{}, 16), "text/plain; version=0.0.4");
  });
  s.Get("/v1/models", [this, not_ready](const httplib::Request&, httplib::Response& res) {
    OpenAiService* service = service_.load();
    if (!service) return not_ready(res);
    res.set_content(service->models(), "application/json");
  });

  using Start = std::variant<std::unique_ptr<Generation>, ApiError> (OpenAiService::*)(const std::string&);
  auto generate = [this, not_ready](Start start) {
    return [this, not_ready, start](const httplib::Request& req, httplib::Response& res) {
      OpenAiService* service = service_.load();
      if (!service) return not_ready(res);
      auto started = (service->*start)(req.body);
      if (auto* error = std::get_if<ApiError>(&started)) return send_error(res, *error);
      std::shared_ptr<Generation> generation = std::move(std::get<std::unique_ptr<Generation>>(started));
      res.set_chunked_content_provider(generation->content_type(), [generation](size_t, httplib::DataSink& sink) {
        SinkWriter writer(sink);
        generation->run(writer);
        sink.done();
        return true;
      });
    };
  };
  s.Post("/v1/chat/completions", generate(&OpenAiService::chat));
  s.Post("/v1/completions", generate(&OpenAiService::completion));

  using Render = std::variant<std::string, ApiError> (OpenAiService::*)(const std::string&);
  auto render = [this, not_ready](Render route) {
    return [this, not_ready, route](const httplib::Request& req, httplib::Response& res) {
      OpenAiService* service = service_.load();
      if (!service) return not_ready(res);
      auto rendered = (service->*route)(req.body);
      if (auto* error = std::get_if<ApiError>(&rendered)) return send_error(res, *error);
      res.set_content(std::get<std::string>(rendered), "application/json");
    };
  };
  s.Post("/v1/chat/completions/render", render(&OpenAiService::render_chat));
  s.Post("/v1/completions/render", render(&OpenAiService::render_completion));

  s.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;  // a route already wrote its error
    if (res.status == 404) {
      send_error(res, ApiError{404, "no route " + req.method + " " + req.path, ""});
    } else if (res.status == 413) {
      send_error(res, ApiError{413, "the request body is larger than the server accepts", ""});
    } else {
      send_error(res, ApiError{res.status, "the request could not be served (HTTP " + std::to_string(res.status) + ")", ""});
    }
  });
  s.set_exception_handler([](const httplib::Request& req, httplib::Response& res, std::exception_ptr error) {
    std::string what = "unknown exception";
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    log::error("server: ", req.method, " ", req.path, ": ", what);
    send_error(res, ApiError{500, "internal error: " + what, ""});
  });
  s.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    metrics_.count_http(res.status);
    log::debug("http: ", req.method, " ", req.path, " ", res.status);
  });
}

}  // namespace ds::server
