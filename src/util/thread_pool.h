// ThreadPool: persistent workers for the hot path. `run(fn)` calls fn(thread_index, thread_count)
// on every thread (the caller is thread 0) and returns when all are done; each thread then takes
// one contiguous range of the work, so every thread streams its own part of the weights. `fn` is
// a FunctionRef: handing out a job allocates nothing.
//
// A decode step hands out ~200 jobs of 0.1–1 ms each. Waking a thread through a futex costs ~25 µs
// per direction on these VMs (a condition-variable pool measured 48 µs per empty run), so both
// sides spin on atomics for a while (kSpin) before they block: a hand-off then costs ~1 µs, and
// idle workers still go to sleep soon after the last job.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "util/function_ref.h"

namespace ds {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }
  void run(FunctionRef<void(int thread, int threads)> fn);

  // [begin, end) of `count` items for `thread` of `threads`, in `align`-sized units.
  static std::pair<int64_t, int64_t> range(int64_t count, int thread, int threads, int64_t align = 1);

 private:
  void worker_loop(int index);

  std::vector<std::thread> workers_;
  const FunctionRef<void(int, int)>* job_ = nullptr;  // published by the generation bump
  std::atomic<uint64_t> generation_{0};  // one more per run(); workers wait for it to move
  std::atomic<int> pending_{0};          // workers still in the current job
  std::atomic<int> sleeping_workers_{0};
  std::atomic<bool> caller_sleeping_{false};
  std::atomic<bool> stop_{false};
  std::mutex mutex_;  // only for blocking: the condition variables' partner
  std::condition_variable start_, done_;
};

// Physical cores (hyper-threads share a core's vector units), at least 1.
int physical_cores();

}  // namespace ds
