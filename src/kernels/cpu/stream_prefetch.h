// Software prefetch of a decode's weight stream (each thread reads its share of a weight once, as one
// sequential stream), shared by the formats' decode kernels; how far ahead and how many requests a
// line takes are this CPU's (cpu_tuning.h). `_mm_prefetch` is SSE: every x86-64 build has it.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace ds::kernels {

// With requests > 1 a line is asked for again this many bytes of stream later per request (with 3,
// a line is requested `bytes` + 4 KiB ahead of the kernel, again at + 2 KiB and at `bytes`). On the
// AMX Xeon, whose memory answers in ~200 ns, one request a line left two threads' K-quant stream at
// 24–26 GB/s against a plain read's 29–30, and three reached it; the spacing (0–6 KiB) and the
// distance (9–27 KiB) did not matter, the count did (docs/benchmarks.md). Why the repeats are
// needed is not known.
inline constexpr int64_t kPrefetchRequestStep = 2048;

// Prefetches the line at `at` and, for requests 2 and 3, the lines kPrefetchRequestStep and twice
// that beyond it: called as the stream advances, every line is requested `requests` times. Unrolled
// tests, not a loop over the requests: with a runtime loop the same requests streamed 11–20% slower
// in one run (Q4_K 25.3 against 28.5 GB/s, Q6_K 23.4 against 29.2). Always inlined: written as an ordinary
// inline function, a function of nothing but prefetches, its calls were dropped by GCC 12.
template <_mm_hint kHint>
[[gnu::always_inline]] inline void prefetch_line(const void* at, int requests) {
  const char* line = static_cast<const char*>(at);
  _mm_prefetch(line, kHint);
  if (requests > 1) _mm_prefetch(line + kPrefetchRequestStep, kHint);
  if (requests > 2) _mm_prefetch(line + 2 * kPrefetchRequestStep, kHint);
}

}  // namespace ds::kernels
