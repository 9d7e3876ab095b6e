// AVX-512 probe loops (compiled for AVX-512 only; called after detect_isa).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/cpu_tuning.h"
#include "kernels/cpu/machine_probe.h"
#include "kernels/cpu/stream_prefetch.h"

namespace ds::probe {

// With prefetch.bytes > 0, each 256 bytes' lines are prefetched as the decode kernels do.
DS_PROBE_LOOP float sum_avx512(const float* data, size_t count, StreamPrefetch prefetch) {
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  for (; i + 64 <= count; i += 64) {
    if (prefetch.bytes > 0)
      for (int64_t line = 0; line < 256; line += 64)
        kernels::prefetch_line<_MM_HINT_T0>(reinterpret_cast<const char*>(data + i) + prefetch.bytes + line,
                                            prefetch.requests);
    a0 = _mm512_add_ps(a0, _mm512_load_ps(data + i));
    a1 = _mm512_add_ps(a1, _mm512_load_ps(data + i + 16));
    a2 = _mm512_add_ps(a2, _mm512_load_ps(data + i + 32));
    a3 = _mm512_add_ps(a3, _mm512_load_ps(data + i + 48));
  }
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
  float total = 0;
  for (float lane : lanes) total += lane;
  return total;
}

// 10 independent accumulators × `iterations` × 32 bf16 products × 2 flops.
DS_PROBE_LOOP float dpbf16_loop(int64_t iterations) {
  __m512 acc[10];
  for (auto& a : acc) a = _mm512_setzero_ps();
  const __m512i x = _mm512_set1_epi16(0x3f80), y = _mm512_set1_epi16(0x3c00);  // 1.0, ~0.0078
  for (int64_t i = 0; i < iterations; ++i)
    for (auto& a : acc) a = _mm512_dpbf16_ps(a, (__m512bh)x, (__m512bh)y);
  __m512 total = acc[0];
  for (int j = 1; j < 10; ++j) total = _mm512_add_ps(total, acc[j]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, total);
  return lanes[0];
}

// 10 independent int32 accumulators × `iterations` × 64 int8 products × 2 ops (`vpdpbusd`).
DS_PROBE_LOOP int32_t dpbusd_loop(int64_t iterations) {
  __m512i acc[10];
  for (auto& a : acc) a = _mm512_setzero_si512();
  const __m512i x = _mm512_set1_epi8(3), y = _mm512_set1_epi8(-2);
  for (int64_t i = 0; i < iterations; ++i)
    for (auto& a : acc) a = _mm512_dpbusd_epi32(a, x, y);
  __m512i total = acc[0];
  for (int j = 1; j < 10; ++j) total = _mm512_add_epi32(total, acc[j]);  // wraps: only a sink
  alignas(64) uint32_t lanes[16];
  _mm512_store_si512(lanes, total);
  return static_cast<int32_t>(lanes[0]);
}

}  // namespace ds::probe
