// How a K-quant decode prefetches its panels' stream (one per thread: a superblock's codes and side
// bytes, then the next's), shared by the AVX-512 and AVX2 kernels; how far and where to is this
// CPU's (cpu_tuning.h). `_mm_prefetch` is SSE: every x86-64 build has it.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/cpu_tuning.h"
#include "kernels/cpu/stream_prefetch.h"
#include "kernels/formats/kquant/kquant_type.h"

namespace ds::kernels {

// Called before group j of the superblock at `codes` (kStride bytes a superblock): prefetches the
// lines prefetch.bytes ahead that belong to it — the j-th eighth of the superblock's lines when the
// prefetch is spread over its groups, else all of them before group 0; each line prefetch.requests
// times (stream_prefetch.h). Always inlined: written as
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
  if (prefetch.into_l2)
    for (int64_t line = first; line < last; ++line) prefetch_line<_MM_HINT_T1>(ahead + 64 * line, prefetch.requests);
  else
    for (int64_t line = first; line < last; ++line) prefetch_line<_MM_HINT_T0>(ahead + 64 * line, prefetch.requests);
}

}  // namespace ds::kernels
