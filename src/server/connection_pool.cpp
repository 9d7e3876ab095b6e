// ConnectionPool: two lanes of threads over FIFOs; the accept loop's enqueue picks the lane, and
// logs a burst once when it starts (the first refusal) and once when it ends (a connection served
// after a quiet second), with how many connections it refused.
#include "server/connection_pool.h"

#include "util/log.h"

namespace ds::server {
namespace {

thread_local bool refusing_thread = false;

// A burst ends at the first connection served after this long without a refusal: a burst that
// frees a thread now and then is one burst in the log, not hundreds.
constexpr auto kBurstQuiet = std::chrono::seconds(1);

}  // namespace

ConnectionPool::ConnectionPool(size_t workers, size_t max_waiting, size_t refusers) {
  serving_.max_threads = workers + max_waiting;
  refusing_.max_threads = refusers;
  refusing_.refusing = true;
  for (Lane* lane : {&serving_, &refusing_}) {
    std::lock_guard lock(lane->mutex);
    for (size_t i = 0; i < (lane == &serving_ ? workers : refusers); ++i) add_thread(*lane);
  }
}

ConnectionPool::~ConnectionPool() { shutdown(); }

bool ConnectionPool::refusing_this_connection() { return refusing_thread; }

void ConnectionPool::add_thread(Lane& lane) {
  lane.threads.emplace_back([&lane] {
    refusing_thread = lane.refusing;
    drain(lane);
  });
}

void ConnectionPool::drain(Lane& lane) {
  for (;;) {
    std::function<void()> connection;
    {
      std::unique_lock lock(lane.mutex);
      lane.wake.wait(lock, [&] { return !lane.waiting.empty() || lane.shutdown; });
      if (lane.waiting.empty()) return;  // shut down, and nothing left to answer
      connection = std::move(lane.waiting.front());
      lane.waiting.pop_front();
      ++lane.busy;
    }
    connection();  // serves the socket until it closes, then closes it
    std::lock_guard lock(lane.mutex);
    --lane.busy;
  }
}

void ConnectionPool::enqueue(std::function<void()> connection) {
  {
    std::lock_guard lock(serving_.mutex);
    // Connections the lane holds (served or about to be) against the threads it may have.
    if (serving_.busy + serving_.waiting.size() < serving_.max_threads) {
      if (refused_in_burst_ > 0 && std::chrono::steady_clock::now() - last_refusal_ > kBurstQuiet) {
        log::info("http: burst over: ", refused_in_burst_, " connections were refused (their API requests answered 503)");
        refused_in_burst_ = 0;
      }
      serving_.waiting.push_back(std::move(connection));
      // No idle thread for it: start one (up to max_threads), rather than make it wait.
      if (serving_.busy + serving_.waiting.size() > serving_.threads.size()) add_thread(serving_);
      serving_.wake.notify_one();
      return;
    }
    last_refusal_ = std::chrono::steady_clock::now();
    if (refused_in_burst_++ == 0)
      log::warn("http: all ", serving_.max_threads, " HTTP threads are busy (--http-threads + --http-queue); answering "
                "new connections 503 with Retry-After");
  }
  // Every connection is run, never dropped: the function owns the socket and closes it.
  std::lock_guard lock(refusing_.mutex);
  refusing_.waiting.push_back(std::move(connection));
  refusing_.wake.notify_one();
}

void ConnectionPool::shutdown() {
  for (Lane* lane : {&serving_, &refusing_}) {
    {
      std::lock_guard lock(lane->mutex);
      if (lane->shutdown) continue;
      lane->shutdown = true;
    }
    lane->wake.notify_all();
    for (std::thread& t : lane->threads) t.join();
  }
}

}  // namespace ds::server
