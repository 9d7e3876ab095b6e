// HttpServer: the HTTP face of deltaserve (cpp-httplib, thread per connection from a bounded pool:
// a connection beyond it is answered 503 with Retry-After): the OpenAI routes, vLLM's render
// routes, vLLM's /tokenize and /detokenize, /health, /ready, /metrics, /version. With API keys
// every route but the probes and scrapes needs `Authorization: Bearer <key>`; with allowed
// origins, browsers' preflights are answered (without a key: browsers never send one on a
// preflight). It listens before the model is loaded, so /health and /ready answer during
// start-up; the API answers 503 until set_service, and again from lifecycle().drain() on (a stop).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "server/api_keys.h"
#include "server/cors.h"
#include "server/lifecycle.h"
#include "server/metrics.h"
#include "server/openai_service.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}

namespace ds::server {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8000;
  int threads = 64;                        // threads kept for connections (each stream holds one)
  int max_waiting = 256;                   // threads started on demand beyond them; more connections are answered 503
  int listen_backlog = 4096;               // the kernel's accept queue (capped by net.core.somaxconn)
  size_t max_body_bytes = size_t{32} << 20;
  ApiKeys api_keys;                        // none: no key asked for
  CorsPolicy cors;                         // no origin: CORS off
  std::string_view chat_page;              // the page GET / answers (static, embedded); empty: no page (--no-ui)
  std::string version;                     // what GET /version answers (vLLM's route)
};

class HttpServer {
 public:
  HttpServer(const HttpOptions& options, ServerMetrics& metrics);
  ~HttpServer();

  // Binds the socket (exclusively: a port another server holds is an error naming host:port) and
  // starts listening; errors come back here, not from serve().
  Status bind();
  // Serves until stop() (blocks; run it on its own thread). stop() may come at any moment, even
  // before serve() has started its loop, and returns once serve() has returned (or will not start).
  void serve();
  void stop();
  int port() const { return port_; }
  // The model is loaded and warmed: the API routes and /ready go live.
  void set_service(OpenAiService* service, Engine* engine);
  // Admission and the generations in flight: drain() takes the server out of service.
  Lifecycle& lifecycle() { return lifecycle_; }

 private:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
  void add_routes();
  void get(const std::string& path, Handler handler);
  void post(const std::string& path, Handler handler);
  Handler api_route(Handler handler);
  ApiError busy_error() const;
  ApiError shutting_down_error() const;
  void add_access_control();

  HttpOptions options_;
  ServerMetrics& metrics_;
  Lifecycle lifecycle_;
  std::unique_ptr<httplib::Server> http_;
  std::atomic<OpenAiService*> service_{nullptr};
  std::atomic<Engine*> engine_{nullptr};
  int port_ = 0;
  int listen_socket_ = -1;                                  // set by the socket-options hook during bind
  std::map<std::string, std::vector<std::string>> routes_;  // path → methods, for 405 answers
  std::mutex state_mutex_;
  bool stop_requested_ = false;  // guarded by state_mutex_
  bool serving_ = false;         // serve() is between its check and its return; guarded by state_mutex_
};

}  // namespace ds::server
