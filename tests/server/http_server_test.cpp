// HttpServer start and stop: a stop that comes at any moment after serve() is launched — even
// before cpp-httplib's accept loop runs, as when start-up fails right after bind — ends serve().
// (Such a stop used to be lost and `deltaserve serve` hung on a start-up error.)
#include <gtest/gtest.h>

#include <thread>

#include "server/http_server.h"
#include "server/metrics.h"

namespace ds::server {
namespace {

TEST(HttpServer, StopAtAnyMomentAfterServeStartsEndsIt) {
  ServerMetrics metrics("test");
  HttpOptions options;
  options.port = 0;
  options.threads = 2;
  for (int i = 0; i < 300; ++i) {
    HttpServer http(options, metrics);
    ASSERT_TRUE(http.bind().ok());
    std::thread listener([&] { http.serve(); });
    if (i % 3 == 1) std::this_thread::yield();
    if (i % 3 == 2) std::this_thread::sleep_for(std::chrono::microseconds(i));
    http.stop();  // must not return before serve() has
    listener.join();
  }
}

TEST(HttpServer, StopBeforeServeMeansServeReturnsAtOnce) {
  ServerMetrics metrics("test");
  HttpOptions options;
  options.port = 0;
  HttpServer http(options, metrics);
  ASSERT_TRUE(http.bind().ok());
  http.stop();
  http.serve();  // returns: the stop came first
}

}  // namespace
}  // namespace ds::server
