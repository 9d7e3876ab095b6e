// Lifecycle: whether the server admits API requests, and the generations in flight, so a stop
// drains instead of dropping work: from drain() on, /ready and every new API request answer 503
// (with Retry-After, so a gateway retries elsewhere) while the generations already admitted run
// to their end; abort_in_flight() ends those still running when the drain's time is up, each
// client told why.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace ds::server {

class Lifecycle {
 public:
  // An admitted generation, counted in flight until the ticket is destroyed.
  class Ticket {
   public:
    explicit Ticket(Lifecycle& lifecycle) : lifecycle_(lifecycle) {}
    ~Ticket() { lifecycle_.finished(); }
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;

   private:
    Lifecycle& lifecycle_;
  };

  // A ticket, or null once draining (checked and counted under one lock: a request admitted just
  // before drain() is waited for, one after it is refused).
  std::shared_ptr<Ticket> admit();
  void drain();
  bool draining() const { return draining_.load(); }
  int64_t in_flight() const;
  // Waits until nothing is in flight or `deadline` passes; true when nothing is in flight.
  bool wait_idle(std::chrono::steady_clock::time_point deadline);

  // Generations still running end at their next poll, with `reason` as their error.
  void abort_in_flight(std::string reason);
  bool aborting() const { return aborting_.load(); }
  const std::string& abort_reason() const { return abort_reason_; }  // set before aborting() turns true

 private:
  void finished();

  mutable std::mutex mutex_;
  std::condition_variable idle_;
  int64_t in_flight_ = 0;  // guarded by mutex_
  std::atomic<bool> draining_{false};
  std::atomic<bool> aborting_{false};
  std::string abort_reason_;
};

}  // namespace ds::server
