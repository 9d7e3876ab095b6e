// Machine probes: bandwidth as a best-of-N timed sum over a buffer larger than the caches.
#include "kernels/cpu/machine_probe.h"

#include <sys/mman.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace ds {
namespace probe {
float sum_avx512(const float* data, size_t count);
float dpbf16_loop(int64_t iterations);
float tdpbf16_loop(int64_t iterations);
int32_t dpbusd_loop(int64_t iterations);
}  // namespace probe

namespace {
float sum_scalar(const float* data, size_t count) {
  float a[8] = {};
  for (size_t i = 0; i + 8 <= count; i += 8)
    for (int j = 0; j < 8; ++j) a[j] += data[i + j];
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
  double best = 0;
  volatile float sink = 0;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    pool.run([&](int t, int threads) {
      const auto [begin, end] = ThreadPool::range(static_cast<int64_t>(count), t, threads, 1024);
      const float s = avx512 ? probe::sum_avx512(buffer.get() + begin, end - begin) : sum_scalar(buffer.get() + begin, end - begin);
      sink = sink + s;
    });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, static_cast<double>(count * sizeof(float)) / seconds);
  }
  return best;
}

double measure_compute_peak(ThreadPool& pool, Isa isa) {
  if (!has_avx512(isa)) return 0;  // only the BF16 dot-product peak is probed
  const int64_t iterations = 20'000'000;
  volatile float sink = 0;
  const auto start = std::chrono::steady_clock::now();
  pool.run([&](int, int) { sink = sink + probe::dpbf16_loop(iterations); });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return static_cast<double>(pool.size()) * iterations * 10 * 32 * 2 / seconds;
}

}  // namespace ds

namespace ds {

double measure_int8_peak(ThreadPool& pool, Isa isa) {
  if (!has_avx512(isa) || !has_avx512_vnni()) return 0;
  const int64_t iterations = 20'000'000;
  volatile int32_t sink = 0;
  const auto start = std::chrono::steady_clock::now();
  pool.run([&](int, int) { sink = sink + probe::dpbusd_loop(iterations); });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return static_cast<double>(pool.size()) * iterations * 10 * 64 * 2 / seconds;
}

double measure_amx_peak(ThreadPool& pool, Isa isa) {
  if (isa != Isa::amx) return 0;
  const int64_t iterations = 1'000'000;
  volatile float sink = 0;
  const auto start = std::chrono::steady_clock::now();
  pool.run([&](int, int) { sink = sink + probe::tdpbf16_loop(iterations); });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return static_cast<double>(pool.size()) * iterations * 4 * 16 * 16 * 32 * 2 / seconds;
}

}  // namespace ds
