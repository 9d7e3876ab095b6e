// Reference gated delta rule: the shared loops of gated_delta_rule.inc, built for plain x86-64,
// one head after another. The CPU backend builds the same loops for AVX2 / AVX-512 and threads
// over heads; tests check that all builds agree bit for bit.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/delta_scratch.h"
#include "kernels/ref/ref_backend.h"

namespace ds {
namespace {
#include "kernels/gated_delta_rule.inc"
}  // namespace

void RefBackend::gated_delta_rule_recurrent(const float* q, const float* k, const float* v, int64_t qkv_stride,
                                            const float* g, const float* beta, int64_t n, const DeltaNetShape& s,
                                            float* state, float* out) {
  DeltaScratch scratch;
  scratch.size_for(s);
  delta_recurrent_heads(q, k, v, qkv_stride, g, beta, n, s, state, out, 0, s.num_v_heads, scratch);
}

void RefBackend::gated_delta_rule_chunked(const float* q, const float* k, const float* v, int64_t qkv_stride,
                                          const float* g, const float* beta, int64_t n, const DeltaNetShape& s,
                                          float* state, float* out) {
  DeltaScratch scratch;
  scratch.size_for(s);
  delta_chunked_heads(q, k, v, qkv_stride, g, beta, n, s, state, out, 0, s.num_v_heads, scratch);
}

}  // namespace ds
