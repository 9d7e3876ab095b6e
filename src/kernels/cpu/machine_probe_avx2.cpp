// AVX2 + FMA probe loop (compiled for AVX2 + FMA only; called after detect_isa).
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/machine_probe.h"

namespace ds::probe {

// 10 independent accumulators × `iterations` × 8 fp32 lanes × 2 flops (`vfmadd231ps` ymm): the peak of
// the AVX2 kernels, which widen bf16 weights to fp32 and multiply-add in fp32.
DS_PROBE_LOOP float fma_loop(int64_t iterations) {
  __m256 acc[10];
  for (auto& a : acc) a = _mm256_setzero_ps();
  const __m256 x = _mm256_set1_ps(1.0f), y = _mm256_set1_ps(0x1p-20f);
  for (int64_t i = 0; i < iterations; ++i)
    for (auto& a : acc) a = _mm256_fmadd_ps(x, y, a);
  __m256 total = acc[0];
  for (int j = 1; j < 10; ++j) total = _mm256_add_ps(total, acc[j]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, total);
  return lanes[0];
}

}  // namespace ds::probe
