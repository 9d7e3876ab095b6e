// HttpServer under real traffic on loopback: a busy port is an error at bind (cpp-httplib's default
// SO_REUSEPORT let a second server share it), a burst of 200 clients connecting at once all get an
// HTTP status (a listen backlog of 5 reset some), a connection beyond the threads and the queue is
// answered 503 with Retry-After and counted, a GET on a POST route is 405, a large body 413.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/http_server.h"
#include "server/metrics.h"

namespace ds::server {
namespace {

// A loopback TCP connection; every read and write gives up after 20 s so a hung server fails the
// test instead of hanging it.
class Client {
 public:
  explicit Client(int port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    timeval timeout{20, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  }
  ~Client() { close(fd_); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  bool connected() const { return connected_; }
  bool send(const std::string& data) { return ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(data.size()); }
  // Everything until the server closes the connection; what came before an error (a reset) if one does.
  std::string read_all(std::string* error = nullptr) {
    std::string out;
    char buffer[4096];
    for (;;) {
      const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
      if (n == 0) return out;
      if (n < 0) {
        if (error) *error = std::strerror(errno);
        return out;
      }
      out.append(buffer, static_cast<size_t>(n));
    }
  }

 private:
  int fd_;
  bool connected_ = false;
};

std::string request(const std::string& method, const std::string& path, const std::string& body = "") {
  return method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\n" +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// "HTTP/1.1 503 ..." → 503; 0 when the text is no HTTP response.
int status_of(const std::string& response) {
  if (response.rfind("HTTP/1.1 ", 0) != 0 || response.size() < 12) return 0;
  return std::atoi(response.substr(9, 3).c_str());
}

std::string exchange(int port, const std::string& text) {
  Client client(port);
  EXPECT_TRUE(client.connected());
  EXPECT_TRUE(client.send(text));
  return client.read_all();
}

// A server on a free loopback port, serving on its own thread until destroyed.
class RunningServer {
 public:
  RunningServer(const HttpOptions& options, ServerMetrics& metrics) : http_(options, metrics) {
    Status bound = http_.bind();
    EXPECT_TRUE(bound.ok()) << bound.message();
    listener_ = std::thread([this] { http_.serve(); });
  }
  ~RunningServer() {
    http_.stop();
    listener_.join();
  }
  int port() const { return http_.port(); }

 private:
  HttpServer http_;
  std::thread listener_;
};

HttpOptions loopback_any_port() {
  HttpOptions options;
  options.port = 0;
  return options;
}

TEST(HttpTraffic, BusyPortIsAnErrorNamingHostAndPort) {
  ServerMetrics metrics("test");
  RunningServer first(loopback_any_port(), metrics);
  HttpOptions options = loopback_any_port();
  options.port = first.port();
  HttpServer second(options, metrics);
  const Status bound = second.bind();
  ASSERT_FALSE(bound.ok()) << "a second server bound the busy port " << first.port();
  EXPECT_NE(bound.message().find("127.0.0.1:" + std::to_string(first.port())), std::string::npos) << bound.message();
  EXPECT_NE(bound.message().find("in use"), std::string::npos) << bound.message();
  // The first server still answers every request (the kernel splits nothing).
  for (int i = 0; i < 10; ++i) EXPECT_EQ(status_of(exchange(first.port(), request("GET", "/health"))), 200);
}

TEST(HttpTraffic, BurstOf200ClientsAllGetAnHttpStatus) {
  ServerMetrics metrics("test");
  HttpOptions options = loopback_any_port();
  options.threads = 4;
  RunningServer server(options, metrics);
  constexpr int kClients = 200;
  std::vector<int> statuses(kClients, -1);
  std::vector<std::string> errors(kClients);
  std::mutex mutex;
  std::condition_variable go;
  int ready = 0;
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i)
    clients.emplace_back([&, i] {
      {  // every client connects at the same moment
        std::unique_lock lock(mutex);
        if (++ready == kClients) go.notify_all();
        go.wait(lock, [&] { return ready == kClients; });
      }
      Client client(server.port());
      if (!client.connected()) {
        errors[static_cast<size_t>(i)] = "connect failed";
        return;
      }
      if (!client.send(request("GET", i % 2 ? "/health" : "/v1/models"))) errors[static_cast<size_t>(i)] = "send failed";
      statuses[static_cast<size_t>(i)] = status_of(client.read_all(&errors[static_cast<size_t>(i)]));
    });
  for (std::thread& t : clients) t.join();
  for (int i = 0; i < kClients; ++i) {
    const auto k = static_cast<size_t>(i);
    // /health: 200; /v1/models: 503 (no model: "still loading") — an HTTP answer either way.
    EXPECT_EQ(statuses[k], i % 2 ? 200 : 503) << "client " << i << ": " << errors[k];
  }
}

TEST(HttpTraffic, ConnectionsBeyondThreadsAndQueueGet503WithRetryAfter) {
  ServerMetrics metrics("test");
  HttpOptions options = loopback_any_port();
  options.threads = 2;
  options.max_waiting = 1;
  RunningServer server(options, metrics);
  // Three silent connections: two hold the threads (each waits for a request), one waits in the queue.
  std::vector<std::unique_ptr<Client>> silent;
  for (int i = 0; i < 3; ++i) {
    silent.push_back(std::make_unique<Client>(server.port()));
    ASSERT_TRUE(silent.back()->connected());
  }
  constexpr int kRefused = 20;
  for (int i = 0; i < kRefused; ++i) {
    const std::string response = exchange(server.port(), request("POST", "/v1/completions", R"({"prompt": "x"})"));
    ASSERT_EQ(status_of(response), 503) << response;
    EXPECT_NE(response.find("Retry-After: 1"), std::string::npos) << response;
    EXPECT_NE(response.find("the server is busy"), std::string::npos) << response;
  }
  // Probes are answered even then: a refused /health would get the server restarted.
  const std::string health = exchange(server.port(), request("GET", "/health"));
  EXPECT_EQ(status_of(health), 200) << health;
  const std::string text = metrics.render(EngineCounters{}, 16);
  EXPECT_NE(text.find("deltaserve_http_refused_connections_total{model_name=\"test\"} 20\n"), std::string::npos) << text;
  // Once the silent clients leave, a connection is served again (here: "still loading", no Retry-After).
  silent.clear();
  std::string response;
  for (int attempt = 0; attempt < 100; ++attempt) {
    response = exchange(server.port(), request("POST", "/v1/completions", R"({"prompt": "x"})"));
    if (response.find("still loading") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(status_of(response), 503) << response;
  EXPECT_NE(response.find("still loading"), std::string::npos) << response;
  EXPECT_EQ(response.find("Retry-After"), std::string::npos) << response;
}

TEST(HttpTraffic, WrongMethodIs405AndLargeBodyIs413WithTheLimit) {
  ServerMetrics metrics("test");
  HttpOptions options = loopback_any_port();
  options.max_body_bytes = 1000;
  RunningServer server(options, metrics);
  const std::string get = exchange(server.port(), request("GET", "/v1/chat/completions"));
  EXPECT_EQ(status_of(get), 405) << get;
  EXPECT_NE(get.find("Allow: POST"), std::string::npos) << get;
  EXPECT_NE(get.find("/v1/chat/completions accepts POST, not GET"), std::string::npos) << get;
  const std::string unknown = exchange(server.port(), request("GET", "/v1/nothing"));
  EXPECT_EQ(status_of(unknown), 404) << unknown;
  const std::string large = exchange(server.port(), request("POST", "/v1/completions", std::string(2000, ' ')));
  EXPECT_EQ(status_of(large), 413) << large;
  EXPECT_NE(large.find("at most 1000 bytes"), std::string::npos) << large;
}

TEST(HttpTraffic, ProbesAreNotCountedAsApiResponses) {
  ServerMetrics metrics("test");
  RunningServer server(loopback_any_port(), metrics);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(status_of(exchange(server.port(), request("GET", "/ready"))), 503);  // loading
  EXPECT_EQ(status_of(exchange(server.port(), request("GET", "/v1/nothing"))), 404);
  const std::string text = metrics.render(EngineCounters{}, 16);
  EXPECT_NE(text.find("deltaserve_http_responses_total{code=\"5xx\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("deltaserve_http_responses_total{code=\"4xx\"} 1\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace ds::server
