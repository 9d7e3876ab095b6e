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

ConnectionPool::ConnectionPool(size_t workers, size_t max_waiting, size_t refusers) : max_waiting_(max_waiting) {
  start(serving_, workers, false);
  start(refusing_, refusers, true);
}

ConnectionPool::~ConnectionPool() { shutdown(); }

bool ConnectionPool::refusing_this_connection() { return refusing_thread; }

void ConnectionPool::start(Lane& lane, size_t threads, bool refusing) {
  for (size_t i = 0; i < threads; ++i)
    lane.threads.emplace_back([&lane, refusing] {
      refusing_thread = refusing;
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
    // Connections the lane holds (served or about to be) against what it may hold; a connection
    // not yet picked up by an idle thread does not wait.
    if (serving_.busy + serving_.waiting.size() < serving_.threads.size() + max_waiting_) {
      if (refused_in_burst_ > 0 && std::chrono::steady_clock::now() - last_refusal_ > kBurstQuiet) {
        log::info("http: burst over: ", refused_in_burst_, " connections were refused (their API requests answered 503)");
        refused_in_burst_ = 0;
      }
      serving_.waiting.push_back(std::move(connection));
      serving_.wake.notify_one();
      return;
    }
    last_refusal_ = std::chrono::steady_clock::now();
    if (refused_in_burst_++ == 0)
      log::warn("http: all ", serving_.threads.size(), " HTTP threads are busy and ", max_waiting_,
                " connections wait (--http-threads, --http-queue); answering new ones 503 with Retry-After");
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
