// ThreadPool: persistent workers for the hot path. `run(fn)` calls fn(thread_index, thread_count)
// on every thread (the caller is thread 0) and returns when all are done; each thread then takes
// one contiguous range of the work, so every thread streams its own part of the weights.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ds {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }
  void run(const std::function<void(int thread, int threads)>& fn);

  // [begin, end) of `count` items for `thread` of `threads`, in `align`-sized units.
  static std::pair<int64_t, int64_t> range(int64_t count, int thread, int threads, int64_t align = 1);

 private:
  void worker_loop(int index);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_, done_;
  const std::function<void(int, int)>* job_ = nullptr;
  uint64_t generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
};

// Physical cores (hyper-threads share a core's vector units), at least 1.
int physical_cores();

}  // namespace ds
