// parallel_ranges over std::thread (fork-join).
#include "util/parallel_ranges.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace ds {

void parallel_ranges(size_t count, int threads, FunctionRef<void(size_t, size_t)> fn) {
  const size_t workers = std::max<size_t>(1, std::min<size_t>(static_cast<size_t>(std::max(threads, 1)), count));
  if (workers <= 1) {
    if (count > 0) fn(0, count);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  const size_t per = count / workers, extra = count % workers;
  size_t begin = 0;
  size_t first_end = 0;
  for (size_t w = 0; w < workers; ++w) {
    const size_t end = begin + per + (w < extra ? 1 : 0);
    if (w == 0) first_end = end;
    else pool.emplace_back([&fn, begin, end] { fn(begin, end); });
    begin = end;
  }
  fn(0, first_end);
  for (auto& thread : pool) thread.join();
}

int available_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

}  // namespace ds
