// Lifecycle: a counter under a mutex, a condition variable for the drain to wait on.
#include "server/lifecycle.h"

namespace ds::server {

std::shared_ptr<Lifecycle::Ticket> Lifecycle::admit() {
  std::lock_guard lock(mutex_);
  if (draining_.load()) return nullptr;
  ++in_flight_;
  return std::make_shared<Ticket>(*this);
}

void Lifecycle::drain() {
  std::lock_guard lock(mutex_);
  draining_.store(true);
}

int64_t Lifecycle::in_flight() const {
  std::lock_guard lock(mutex_);
  return in_flight_;
}

bool Lifecycle::wait_idle(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  return idle_.wait_until(lock, deadline, [&] { return in_flight_ == 0; });
}

void Lifecycle::abort_in_flight(std::string reason) {
  if (aborting_.load()) return;
  abort_reason_ = std::move(reason);
  aborting_.store(true);
}

void Lifecycle::finished() {
  std::lock_guard lock(mutex_);
  if (--in_flight_ == 0) idle_.notify_all();
}

}  // namespace ds::server
