// Machine probes: bandwidth as a best-of-N timed sum over a buffer larger than the caches.
#include "kernels/cpu/machine_probe.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "kernels/cpu/cpu_tuning.h"
#include "kernels/cpu/stream_prefetch.h"

namespace ds {
namespace probe {
float sum_avx512(const float* data, size_t count, StreamPrefetch prefetch);
float dpbf16_loop(int64_t iterations);
float fma_loop(int64_t iterations);
float tdpbf16_loop(int64_t iterations);
int32_t dpbusd_loop(int64_t iterations);
}  // namespace probe

namespace {
DS_PROBE_LOOP float sum_scalar(const float* data, size_t count, StreamPrefetch prefetch) {
  float a[8] = {};
  for (size_t i = 0; i + 8 <= count; i += 8) {
    if (prefetch.bytes > 0 && i % 16 == 0)
      kernels::prefetch_line<_MM_HINT_T0>(reinterpret_cast<const char*>(data + i) + prefetch.bytes, prefetch.requests);
    for (int j = 0; j < 8; ++j) a[j] += data[i + j];
  }
  float total = 0;
  for (float x : a) total += x;
  return total;
}
}  // namespace

double measure_read_bandwidth(ThreadPool& pool, uint64_t bytes, int repeats) {
  const size_t count = bytes / sizeof(float);
  // 2 MiB pages where the kernel grants them, as the int8 weights get (model/quantize.cpp): the floor
  // should be what the machine can read, not what 4 KiB pages allow (~15–25% less here).
  constexpr size_t kHugePage = 2 << 20;
  const size_t reserved = (count * sizeof(float) + kHugePage - 1) / kHugePage * kHugePage;
  std::unique_ptr<float, decltype(&std::free)> buffer(static_cast<float*>(std::aligned_alloc(kHugePage, reserved)),
                                                      &std::free);
  madvise(buffer.get(), reserved, MADV_HUGEPAGE);
  pool.run([&](int t, int threads) {  // each thread touches (and so places) its own range
    const auto [begin, end] = ThreadPool::range(static_cast<int64_t>(count), t, threads, 1024);
    std::memset(buffer.get() + begin, 1, (end - begin) * sizeof(float));
  });
  const bool avx512 = has_avx512(detect_isa());
  // Read plainly and, where this CPU's decode kernels prefetch, as they do: the floor is the faster
  // (on the AMX Xeon the prefetched read is ~20% faster, 38–40 against 31–32 GB/s on two threads).
  std::vector<StreamPrefetch> ways = {StreamPrefetch{}};
  if (cpu_tuning().decode_prefetch.bytes > 0) ways.push_back(cpu_tuning().decode_prefetch);
  double best = 0;
  volatile float sink = 0;
  for (int r = 0; r < repeats; ++r)
    for (const StreamPrefetch& prefetch : ways) {
      const auto start = std::chrono::steady_clock::now();
      pool.run([&](int t, int threads) {
        const auto [begin, end] = ThreadPool::range(static_cast<int64_t>(count), t, threads, 1024);
        const float* data = buffer.get() + begin;
        const auto n = static_cast<size_t>(end - begin);
        sink = sink + (avx512 ? probe::sum_avx512(data, n, prefetch) : sum_scalar(data, n, prefetch));
      });
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      best = std::max(best, static_cast<double>(count * sizeof(float)) / seconds);
    }
  return best;
}

namespace {

// Operations per second of `loop` (which returns a sink value) run by every thread at once, each
// doing `ops` operations: the best of three runs, as a peak is what the units can do and one short
// run can lose its core to another process (a Zen 3 run measured 93 GFLOP/s of FMA where the same
// binary had measured 189 minutes before).
template <typename Loop>
double rate_on_all_threads(ThreadPool& pool, double ops, Loop loop) {
  volatile double sink = 0;
  double best = 0;
  for (int run = 0; run < 3; ++run) {
    const auto start = std::chrono::steady_clock::now();
    pool.run([&](int, int) { sink = sink + static_cast<double>(loop()); });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, static_cast<double>(pool.size()) * ops / seconds);
  }
  return best;
}

}  // namespace

double measure_compute_peak(ThreadPool& pool, Isa isa) {
  if (!has_avx512(isa)) return 0;  // only the BF16 dot-product peak is probed
  constexpr int64_t kIterations = 20'000'000;  // × 10 accumulators × 32 products × 2 flops
  return rate_on_all_threads(pool, kIterations * 10.0 * 32 * 2, [] { return probe::dpbf16_loop(kIterations); });
}

double measure_fma_peak(ThreadPool& pool, Isa isa) {
  if (isa < Isa::avx2) return 0;
  constexpr int64_t kIterations = 20'000'000;  // × 10 accumulators × 8 lanes × 2 flops
  return rate_on_all_threads(pool, kIterations * 10.0 * 8 * 2, [] { return probe::fma_loop(kIterations); });
}

double measure_int8_peak(ThreadPool& pool, Isa isa) {
  if (!has_avx512(isa) || !has_avx512_vnni()) return 0;
  constexpr int64_t kIterations = 20'000'000;  // × 10 accumulators × 64 products × 2 ops
  return rate_on_all_threads(pool, kIterations * 10.0 * 64 * 2, [] { return probe::dpbusd_loop(kIterations); });
}

double measure_amx_peak(ThreadPool& pool, Isa isa) {
  if (isa != Isa::amx) return 0;
  constexpr int64_t kIterations = 1'000'000;  // × 4 tile products of 16 × 16 × 32 × 2 flops
  return rate_on_all_threads(pool, kIterations * 4.0 * 16 * 16 * 32 * 2, [] { return probe::tdpbf16_loop(kIterations); });
}

}  // namespace ds
