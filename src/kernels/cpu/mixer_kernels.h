// Gated delta rule builds for AVX2 and AVX-512: the reference loops (gated_delta_rule.inc) compiled
// for each ISA without FP contraction, so they vectorise and stay bit-identical to the reference.
// Each call runs value heads [h_begin, h_end) — the CPU backend splits heads across threads.
#pragma once

#include "kernels/delta_scratch.h"

namespace ds::kernels {

#define DS_DELTA_KERNEL(name)                                                                                     \
  void name(const float* q, const float* k, const float* v, int64_t qkv_stride, const float* g, const float* beta, \
            int64_t n, const DeltaNetShape& s, float* state, float* out, int64_t h_begin, int64_t h_end,           \
            DeltaScratch& scratch)
DS_DELTA_KERNEL(delta_recurrent_avx512);
DS_DELTA_KERNEL(delta_chunked_avx512);
DS_DELTA_KERNEL(delta_recurrent_avx2);
DS_DELTA_KERNEL(delta_chunked_avx2);
#undef DS_DELTA_KERNEL

}  // namespace ds::kernels
