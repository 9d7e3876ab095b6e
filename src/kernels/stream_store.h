// stream_copy: dst[0, n) = src[0, n) with non-temporal stores where the build has them. A plain
// store first reads every line it writes (read for ownership); a state written once into another
// array (a speculative verify's, gated_delta_rule_tiled.inc) then costs a third more memory traffic
// than updating it in place. Streaming stores skip that read. Ends with a store fence, so the data
// is in memory order before the calling thread signals that it is done (streaming stores are
// weakly ordered).
#pragma once

#include <algorithm>
#include <cstdint>

#if defined(__AVX512F__) || defined(__AVX__)
#include <immintrin.h>
#endif

namespace ds::kernels {

inline void stream_copy(float* dst, const float* src, int64_t n) {
#if defined(__AVX512F__) || defined(__AVX__)
#if defined(__AVX512F__)
  constexpr int64_t kLanes = 16;
#else
  constexpr int64_t kLanes = 8;
#endif
  constexpr uintptr_t kAlign = kLanes * sizeof(float);
  int64_t i = 0;
  for (; i < n && reinterpret_cast<uintptr_t>(dst + i) % kAlign != 0; ++i) dst[i] = src[i];  // up to an aligned vector
  for (; i + kLanes <= n; i += kLanes) {
#if defined(__AVX512F__)
    _mm512_stream_ps(dst + i, _mm512_loadu_ps(src + i));
#else
    _mm256_stream_ps(dst + i, _mm256_loadu_ps(src + i));
#endif
  }
  for (; i < n; ++i) dst[i] = src[i];
  _mm_sfence();
#else
  std::copy_n(src, n, dst);
#endif
}

}  // namespace ds::kernels
