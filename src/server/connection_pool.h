// ConnectionPool: cpp-httplib's task queue with a bound — `workers` threads serve connections and at
// most `max_waiting` more wait for one; a connection beyond that goes to a small refusing pool whose
// threads still read the request and answer it (HttpServer sends 503 + Retry-After there), so a
// client in a burst gets an HTTP status, never a reset or a silent close.
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
  // One FIFO of connections and the threads that serve it.
  struct Lane {
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<std::function<void()>> waiting;
    size_t busy = 0;  // threads running a connection
    bool shutdown = false;
    std::vector<std::thread> threads;
  };
  void start(Lane& lane, size_t threads, bool refusing);
  static void drain(Lane& lane);

  size_t max_waiting_;
  Lane serving_, refusing_;
  uint64_t refused_in_burst_ = 0;  // guarded by serving_.mutex; > 0 while a burst lasts
  std::chrono::steady_clock::time_point last_refusal_;  // guarded by serving_.mutex
};

}  // namespace ds::server
