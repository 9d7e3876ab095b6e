// ThreadPool: a generation counter wakes the workers; the caller works as thread 0.
#include "util/thread_pool.h"

#include <fstream>
#include <set>
#include <string>

namespace ds {

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  start_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void ThreadPool::run(const std::function<void(int, int)>& fn) {
  if (workers_.empty()) {
    fn(0, 1);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    job_ = &fn;
    pending_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  start_.notify_all();
  fn(0, size());
  std::unique_lock lock(mutex_);
  done_.wait(lock, [this] { return pending_ == 0; });
  job_ = nullptr;
}

void ThreadPool::worker_loop(int index) {
  uint64_t seen = 0;
  for (;;) {
    const std::function<void(int, int)>* job;
    {
      std::unique_lock lock(mutex_);
      start_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
    }
    (*job)(index, size());
    {
      std::lock_guard lock(mutex_);
      if (--pending_ == 0) done_.notify_one();
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
