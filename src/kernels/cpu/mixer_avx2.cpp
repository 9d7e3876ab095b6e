// The gated delta rule (gated_delta_rule.inc) compiled for avx2 (see src/kernels/CMakeLists.txt).
#include <algorithm>
#include <cmath>

#include "kernels/cpu/deltanet_kernels.h"

namespace ds::kernels {
namespace {
#include "kernels/gated_delta_rule.inc"
}  // namespace

void delta_recurrent_avx2(const float* q, const float* k, const float* v, int64_t qkv_stride, const float* g,
                          const float* beta, int64_t n, const DeltaNetShape& s, float* state, float* out,
                          int64_t h_begin, int64_t h_end, DeltaScratch& scratch) {
  delta_recurrent_heads(q, k, v, qkv_stride, g, beta, n, s, state, out, h_begin, h_end, scratch);
}

void delta_chunked_avx2(const float* q, const float* k, const float* v, int64_t qkv_stride, const float* g,
                        const float* beta, int64_t n, const DeltaNetShape& s, float* state, float* out,
                        int64_t h_begin, int64_t h_end, DeltaScratch& scratch) {
  delta_chunked_heads(q, k, v, qkv_stride, g, beta, n, s, state, out, h_begin, h_end, scratch);
}

}  // namespace ds::kernels
