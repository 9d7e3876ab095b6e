// ConnectionPool: cpp-httplib's task queue with a bound — `workers` threads serve connections, and
// when all are busy up to `max_waiting` more are started for the connections that come (a thread
// per connection: a connection never waits behind a long stream, so a probe or a /metrics scrape
// is answered at once however many streams hold threads, and every request reaches the engine,
// whose queue the waiting gauge counts). A connection beyond both goes to a small refusing pool
// whose threads still read the request and answer it (HttpServer sends 503 + Retry-After there),
// so a client in a burst gets an HTTP status, never a reset or a silent close.
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ds::server {

class ConnectionPool : public httplib::TaskQueue {
 public:
  ConnectionPool(size_t workers, size_t max_waiting, size_t refusers);
  ~ConnectionPool() override;

  void enqueue(std::function<void()> connection) override;
  void shutdown() override;

  // True on a refusing thread: the connection came when every worker was busy and the queue full.
  static bool refusing_this_connection();

 private:
  // One FIFO of connections and the threads that serve it (started up to max_threads on demand).
  struct Lane {
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<std::function<void()>> waiting;
    size_t busy = 0;  // threads running a connection
    size_t max_threads = 0;
    bool refusing = false;
    bool shutdown = false;
    std::vector<std::thread> threads;
  };
  // Starts one more thread on the lane (its mutex held).
  static void add_thread(Lane& lane);
  static void drain(Lane& lane);

  Lane serving_, refusing_;
  uint64_t refused_in_burst_ = 0;  // guarded by serving_.mutex; > 0 while a burst lasts
  std::chrono::steady_clock::time_point last_refusal_;  // guarded by serving_.mutex
};

}  // namespace ds::server
