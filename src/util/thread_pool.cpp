// ThreadPool: a generation counter wakes the workers (spinning first, then blocking); the caller
// works as thread 0.
#include "util/thread_pool.h"

#include <fstream>
#include <set>
#include <string>

namespace ds {

namespace {

// Spin iterations before blocking: ~50 µs of `pause` (~25 ns each here), longer than the gaps between the
// jobs of one step, far shorter than the gaps between steps of an idle engine.
constexpr int kSpin = 2000;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_.store(true);
    generation_.fetch_add(1);
  }
  start_.notify_all();
  for (auto& worker : workers_) worker.join();
}

// Lost wake-ups are ruled out by sequentially consistent atomics on both sides: a worker announces
// itself in sleeping_workers_ before it re-checks generation_ under the mutex, and run() bumps
// generation_ before it reads sleeping_workers_, so either the worker sees the new generation or
// run() sees the sleeper and notifies under the mutex. The same holds for caller_sleeping_ and pending_.
void ThreadPool::run(FunctionRef<void(int, int)> fn) {
  if (workers_.empty()) {
    fn(0, 1);
    return;
  }
  job_ = &fn;
  pending_.store(static_cast<int>(workers_.size()));
  generation_.fetch_add(1);
  if (sleeping_workers_.load() > 0) {
    std::lock_guard lock(mutex_);
    start_.notify_all();
  }
  fn(0, size());
  for (int i = 0; i < kSpin && pending_.load() != 0; ++i) cpu_relax();
  if (pending_.load() != 0) {
    std::unique_lock lock(mutex_);
    caller_sleeping_.store(true);
    done_.wait(lock, [this] { return pending_.load() == 0; });
    caller_sleeping_.store(false);
  }
  job_ = nullptr;
}

void ThreadPool::worker_loop(int index) {
  uint64_t seen = 0;
  for (;;) {
    for (int i = 0; i < kSpin && generation_.load() == seen; ++i) cpu_relax();
    if (generation_.load() == seen) {
      std::unique_lock lock(mutex_);
      sleeping_workers_.fetch_add(1);
      start_.wait(lock, [&] { return generation_.load() != seen; });
      sleeping_workers_.fetch_sub(1);
    }
    if (stop_.load()) return;
    seen = generation_.load();
    (*job_)(index, size());
    if (pending_.fetch_sub(1) == 1 && caller_sleeping_.load()) {
      std::lock_guard lock(mutex_);
      done_.notify_one();
    }
  }
}

std::pair<int64_t, int64_t> ThreadPool::range(int64_t count, int thread, int threads, int64_t align) {
  const int64_t units = (count + align - 1) / align;
  const int64_t per = units / threads, extra = units % threads;
  const int64_t begin = (thread * per + std::min<int64_t>(thread, extra)) * align;
  const int64_t end = begin + (per + (thread < extra ? 1 : 0)) * align;
  return {std::min(begin, count), std::min(end, count)};
}

int physical_cores() {
  // Count distinct (physical id, core id) pairs; fall back to hardware_concurrency.
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::set<std::string> cores;
  std::string line, physical = "0";
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("physical id", 0) == 0) physical = line.substr(line.find(':') + 1);
    if (line.rfind("core id", 0) == 0) cores.insert(physical + "/" + line.substr(line.find(':') + 1));
  }
  if (!cores.empty()) return static_cast<int>(cores.size());
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace ds
