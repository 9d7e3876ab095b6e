// How a K-quant decode prefetches its panels' stream (one per thread: a superblock's codes and side
// bytes, then the next's), shared by the AVX-512 and AVX2 kernels; how far and where to is this
// CPU's (cpu_tuning.h). `_mm_prefetch` is SSE: every x86-64 build has it.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/cpu_tuning.h"
#include "kernels/formats/kquant/kquant_type.h"

namespace ds::kernels {

// With copies > 1 each line is requested again this many bytes of stream later per copy (with 3, a
// line is asked for `bytes` + 4 KiB ahead of the kernel, again at + 2 KiB and at `bytes`). On the AMX Xeon, whose
// memory answers in ~200 ns, one request a line left two threads' stream at 24–26 GB/s against a
// plain read's 29–30, and three reached it — the spacing (0–6 KiB) and the distance (9–27 KiB) did
// not matter, the count did (docs/benchmarks.md); why the repeats are needed is not known.
inline constexpr int64_t kKquantPrefetchCopyStep = 2048;

// Called before group j of the superblock at `codes` (kStride bytes a superblock): prefetches the
// lines prefetch.bytes ahead that belong to it — the j-th eighth of the superblock's lines when the
// prefetch is spread over its groups, else all of them before group 0; each `copies` times. The
// copies are unrolled tests, not a loop: with a runtime loop over them the same requests streamed
// 15–23% slower (Q4_K 25.3 against 29.9 GB/s, Q6_K 23.4 against 30.2). Always inlined: written as
// an ordinary inline function it left no prefetch in the kernels' objects under GCC 12 (a function of
// nothing but prefetches seems to count as free of side effects, so its calls were dropped).
template <int64_t kStride>
[[gnu::always_inline]] inline void kquant_prefetch_ahead(const std::byte* codes, int64_t j, KquantPrefetch prefetch) {
  static_assert(kStride % 64 == 0, "superblocks are whole cache lines");
  if (prefetch.bytes == 0) return;
  constexpr int64_t kLines = kStride / 64;
  int64_t first = 0, last = j == 0 ? kLines : 0;  // the lines [first, last) of the superblock ahead
  if (prefetch.per_group) {
    first = (j * kLines + kGroupsPerSuperblock - 1) / kGroupsPerSuperblock;
    last = ((j + 1) * kLines + kGroupsPerSuperblock - 1) / kGroupsPerSuperblock;
  }
  const char* ahead = reinterpret_cast<const char*>(codes + prefetch.bytes);
  constexpr int64_t kStep = kKquantPrefetchCopyStep;
  if (prefetch.into_l2)
    for (int64_t line = first; line < last; ++line) {
      _mm_prefetch(ahead + 64 * line, _MM_HINT_T1);
      if (prefetch.copies > 1) _mm_prefetch(ahead + 64 * line + kStep, _MM_HINT_T1);
      if (prefetch.copies > 2) _mm_prefetch(ahead + 64 * line + 2 * kStep, _MM_HINT_T1);
    }
  else
    for (int64_t line = first; line < last; ++line) {
      _mm_prefetch(ahead + 64 * line, _MM_HINT_T0);
      if (prefetch.copies > 1) _mm_prefetch(ahead + 64 * line + kStep, _MM_HINT_T0);
      if (prefetch.copies > 2) _mm_prefetch(ahead + 64 * line + 2 * kStep, _MM_HINT_T0);
    }
}

}  // namespace ds::kernels
