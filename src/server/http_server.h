// HttpServer: the HTTP face of deltaserve (cpp-httplib, thread per connection from a pool): the
// OpenAI routes, vLLM's render routes, /health, /ready, /metrics. It listens before the model is
// loaded, so /health and /ready answer during start-up; the API answers 503 until set_service.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "server/metrics.h"
#include "server/openai_service.h"

namespace httplib {
class Server;
}

namespace ds::server {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8000;
  int threads = 64;                        // connections served at once (each stream holds one)
  size_t max_body_bytes = size_t{32} << 20;
};

class HttpServer {
 public:
  HttpServer(const HttpOptions& options, ServerMetrics& metrics);
  ~HttpServer();

  // Binds the socket; an error (port in use, bad host) comes back here, not from serve().
  Status bind();
  // Serves until stop() (blocks; run it on its own thread). stop() may come at any moment, even
  // before serve() has started its loop, and returns once serve() has returned (or will not start).
  void serve();
  void stop();
  int port() const { return port_; }
  // The model is loaded and warmed: the API routes and /ready go live.
  void set_service(OpenAiService* service, Engine* engine);

 private:
  void add_routes();

  HttpOptions options_;
  ServerMetrics& metrics_;
  std::unique_ptr<httplib::Server> http_;
  std::atomic<OpenAiService*> service_{nullptr};
  std::atomic<Engine*> engine_{nullptr};
  int port_ = 0;
  std::mutex state_mutex_;
  bool stop_requested_ = false;  // guarded by state_mutex_
  bool serving_ = false;         // serve() is between its check and its return; guarded by state_mutex_
};

}  // namespace ds::server
