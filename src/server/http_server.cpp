// HttpServer: routes → OpenAiService; every error is an OpenAI error envelope, every exception a 500,
// and a generation streams through a chunked content provider that notices a vanished client.
#include "server/http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <nlohmann/json.hpp>

#include "server/connection_pool.h"
#include "server/request_log.h"
#include "util/log.h"
#include "util/str_cat.h"

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

// Probes, scrapes and the static chat page: their answers say nothing about the API's health
// ("/ready" answers 503 on every start), so deltaserve_http_responses_total leaves them out, and
// they need no API key (the page holds no data: it asks for the key and sends it on API calls).
bool outside_the_api(const std::string& path) {
  return path == "/health" || path == "/ready" || path == "/metrics" || path == "/version" || path == "/";
}

// The message of an error body this server wrote (ApiError::body: {"error": {"message": ...}}).
std::string error_message(const std::string& body) {
  const auto json = nlohmann::json::parse(body, nullptr, false);
  if (json.is_object() && json.contains("error") && json["error"].is_object() && json["error"].contains("message") &&
      json["error"]["message"].is_string())
    return json["error"]["message"].get<std::string>();
  return "(no error message)";
}

constexpr int kRetryAfterSeconds = 1;
constexpr size_t kRefusingThreads = 2;

}  // namespace

HttpServer::HttpServer(const HttpOptions& options, ServerMetrics& metrics)
    : options_(options), metrics_(metrics), http_(std::make_unique<httplib::Server>()) {
  const auto threads = static_cast<size_t>(options_.threads);
  const auto max_waiting = static_cast<size_t>(options_.max_waiting);
  http_->new_task_queue = [threads, max_waiting] { return new ConnectionPool(threads, max_waiting, kRefusingThreads); };
  // cpp-httplib's default sets SO_REUSEPORT, with which a second server binds the same busy port
  // and the kernel splits the connections between the two. SO_REUSEADDR alone still allows a
  // restart over connections in TIME_WAIT, and makes a busy port an error at bind.
  http_->set_socket_options([this](int socket) {
    const int yes = 1;
    setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    listen_socket_ = socket;
  });
  http_->set_payload_max_length(options_.max_body_bytes);
  http_->set_keep_alive_max_count(1000);
  add_routes();
  add_access_control();
}

HttpServer::~HttpServer() { stop(); }

Status HttpServer::bind() {
  errno = 0;
  bool bound = false;
  if (options_.port == 0) {
    port_ = http_->bind_to_any_port(options_.host.c_str());
    bound = port_ > 0;
  } else {
    port_ = options_.port;
    bound = http_->bind_to_port(options_.host.c_str(), options_.port);
  }
  const int bind_errno = errno;
  if (!bound) {
    const std::string why = bind_errno == EADDRINUSE ? "the port is in use (is another server running there?)"
                            : bind_errno != 0       ? std::string(std::strerror(bind_errno))
                                                    : "not an address of this machine, or the port is in use";
    return Status::errorf("cannot listen on ", options_.host, ":", options_.port, ": ", why);
  }
  // cpp-httplib listens with a backlog of 5 (compiled into Debian's library): a burst of clients
  // overflowed it, and some got a reset or no answer within a minute. listen() again on the bound
  // socket resizes the queue.
  if (::listen(listen_socket_, options_.listen_backlog) != 0)
    return Status::errorf("cannot listen on ", options_.host, ":", port_, " with a backlog of ", options_.listen_backlog, ": ",
                          std::strerror(errno));
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

// An API route's handler, or a 503 with Retry-After when the server is stopping (a gateway
// retries elsewhere) or the connection came in a burst that found every HTTP thread busy and the
// waiting queue full.
HttpServer::Handler HttpServer::api_route(Handler handler) {
  return [this, handler](const httplib::Request& req, httplib::Response& res) {
    const bool refusing = ConnectionPool::refusing_this_connection();
    if (!refusing && !lifecycle_.draining()) return handler(req, res);
    if (refusing) metrics_.count_refused_connection();
    res.set_header("Retry-After", std::to_string(kRetryAfterSeconds));
    if (req.get_header_value("Connection") != "close") res.set_header("Connection", "close");  // else cpp-httplib adds it
    send_error(res, refusing ? busy_error() : shutting_down_error());
  };
}

ApiError HttpServer::busy_error() const {
  return ApiError{503,
                  str_cat("the server is busy: all ", options_.threads + options_.max_waiting,
                          " HTTP threads are serving connections (--http-threads + --http-queue); retry after ",
                          kRetryAfterSeconds, " s"),
                  "", ""};
}

ApiError HttpServer::shutting_down_error() const {
  return ApiError{503, "the server is shutting down and takes no new requests; retry on another replica", "", ""};
}

void HttpServer::get(const std::string& path, Handler handler) {
  routes_[path].push_back("GET");
  http_->Get(path, std::move(handler));
}

void HttpServer::post(const std::string& path, Handler handler) {
  routes_[path].push_back("POST");
  http_->Post(path, std::move(handler));
}

// Runs before any route: a browser's preflight (OPTIONS with Origin and
// Access-Control-Request-Method) is answered from the CORS policy, then every route but the probes
// and scrapes checks the API key. Afterwards each response to an allowed origin gets its CORS headers.
void HttpServer::add_access_control() {
  http_->set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    using Answer = httplib::Server::HandlerResponse;
    if (req.method == "OPTIONS" && options_.cors.enabled() && req.has_header("Origin") &&
        req.has_header("Access-Control-Request-Method")) {
      PreflightAnswer answer = answer_preflight(options_.cors, req.get_header_value("Origin"),
                                                req.get_header_value("Access-Control-Request-Method"),
                                                req.get_header_value("Access-Control-Request-Headers"));
      for (auto& [name, value] : answer.headers) res.set_header(name, value);
      if (answer.status == 204) {
        res.status = 204;
      } else {
        send_error(res, ApiError{answer.status, answer.refusal, "", ""});
      }
      return Answer::Handled;
    }
    if (!options_.api_keys.enabled() || outside_the_api(req.path) || options_.api_keys.accepts(req.get_header_value("Authorization")))
      return Answer::Unhandled;
    // OpenAI's answer to a wrong key; the presented key is never echoed or logged.
    res.set_header("WWW-Authenticate", "Bearer");
    const std::string why = req.has_header("Authorization") ? "the API key in the Authorization header is not one this server accepts"
                                                            : "no API key: send the header \"Authorization: Bearer <key>\"";
    send_error(res, ApiError{401, why + " (keys are set with --api-key, --api-key-file or DELTASERVE_API_KEY)", "", "invalid_api_key"});
    return Answer::Handled;
  });
  http_->set_post_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!options_.cors.enabled() || req.method == "OPTIONS" || !req.has_header("Origin")) return;
    for (auto& [name, value] : options_.cors.response_headers(req.get_header_value("Origin"))) res.set_header(name, value);
  });
}

void HttpServer::add_routes() {
  httplib::Server& s = *http_;
  auto not_ready = [](httplib::Response& res) {
    send_error(res, ApiError{503, "the model is still loading; retry when GET /ready answers 200", "", ""});
  };
  // Probes and scrapes are answered even in a burst: a refused /health would get the server killed.
  get("/health", [](const httplib::Request&, httplib::Response& res) { res.set_content("{\"status\": \"ok\"}", "application/json"); });
  if (!options_.chat_page.empty())
    get("/", [this](const httplib::Request&, httplib::Response& res) {
      res.set_header("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'");
      res.set_header("X-Content-Type-Options", "nosniff");
      res.set_content(options_.chat_page.data(), options_.chat_page.size(), "text/html; charset=utf-8");
    });
  get("/ready", [this, not_ready](const httplib::Request&, httplib::Response& res) {
    if (lifecycle_.draining()) return send_error(res, shutting_down_error());
    if (!service_.load()) return not_ready(res);
    res.set_content("{\"status\": \"ready\"}", "application/json");
  });
  get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    Engine* engine = engine_.load();
    res.set_content(metrics_.render(engine ? engine->counters() : EngineCounters{}, engine ? engine->block_size() : kKvBlockSize), "text/plain; version=0.0.4");
  });
  // vLLM's /version; gateways probe it (smg takes an answer for a vLLM-compatible worker and then
  // reads its load from /metrics).
  get("/version", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(nlohmann::json{{"version", options_.version}}.dump(), "application/json");
  });
  get("/v1/models", api_route([this, not_ready](const httplib::Request&, httplib::Response& res) {
    OpenAiService* service = service_.load();
    if (!service) return not_ready(res);
    res.set_content(service->models(), "application/json");
  }));

  using Start = std::variant<std::unique_ptr<Generation>, ApiError> (OpenAiService::*)(const std::string&);
  auto generate = [this, not_ready](Start start) {
    return api_route([this, not_ready, start](const httplib::Request& req, httplib::Response& res) {
      OpenAiService* service = service_.load();
      if (!service) return not_ready(res);
      // Counted in flight from before the engine sees it, so a drain waits for it.
      std::shared_ptr<Lifecycle::Ticket> ticket = lifecycle_.admit();
      if (!ticket) {  // the drain began after api_route let it through
        res.set_header("Retry-After", std::to_string(kRetryAfterSeconds));
        res.set_header("Connection", "close");
        return send_error(res, shutting_down_error());
      }
      auto started = (service->*start)(req.body);
      if (auto* error = std::get_if<ApiError>(&started)) return send_error(res, *error);
      std::shared_ptr<Generation> generation = std::move(std::get<std::unique_ptr<Generation>>(started));
      res.set_chunked_content_provider(generation->content_type(), [this, generation, ticket](size_t, httplib::DataSink& sink) {
        SinkWriter writer(sink);
        generation->run(writer, &lifecycle_);
        sink.done();
        return true;
      });
    });
  };
  post("/v1/chat/completions", generate(&OpenAiService::chat));
  post("/v1/completions", generate(&OpenAiService::completion));

  using Render = std::variant<std::string, ApiError> (OpenAiService::*)(const std::string&);
  auto render = [this, not_ready](Render route) {
    return api_route([this, not_ready, route](const httplib::Request& req, httplib::Response& res) {
      OpenAiService* service = service_.load();
      if (!service) return not_ready(res);
      auto rendered = (service->*route)(req.body);
      if (auto* error = std::get_if<ApiError>(&rendered)) return send_error(res, *error);
      res.set_content(std::get<std::string>(rendered), "application/json");
    });
  };
  post("/v1/chat/completions/render", render(&OpenAiService::render_chat));
  post("/v1/completions/render", render(&OpenAiService::render_completion));
  post("/tokenize", render(&OpenAiService::tokenize));
  post("/detokenize", render(&OpenAiService::detokenize));

  s.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;  // a route already wrote its error
    if (res.status == 404) {
      auto route = routes_.find(req.path);
      if (route == routes_.end()) return send_error(res, ApiError{404, "no route " + req.method + " " + req.path, "", ""});
      // The path exists under another method (cpp-httplib only knows "no handler": 404).
      std::string allowed;
      for (const std::string& method : route->second) allowed += (allowed.empty() ? "" : ", ") + method;
      res.status = 405;
      res.set_header("Allow", allowed);
      send_error(res, ApiError{405, str_cat(req.path, " accepts ", allowed, ", not ", req.method), "", ""});
    } else if (res.status == 413) {
      const std::string found = req.has_header("Content-Length") ? str_cat(" (found ", req.get_header_value("Content-Length"), ")") : "";
      send_error(res, ApiError{413, str_cat("the request body is larger than the server accepts: at most ", options_.max_body_bytes,
                                            " bytes", found), "", ""});
    } else {
      send_error(res, ApiError{res.status, "the request could not be served (HTTP " + std::to_string(res.status) + ")", "", ""});
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
    send_error(res, ApiError{500, "internal error: " + what, "", ""});
  });
  s.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    if (outside_the_api(req.path)) return;
    metrics_.count_http(res.status);
    if (res.status >= 400) log_refused(req.method, req.path, res.status, error_message(res.body));
    else log::debug("http: ", req.method, " ", req.path, " ", res.status);
  });
}

}  // namespace ds::server
