// Row-wise and element-wise ops (elementwise.inc) compiled for avx512 (no FP contraction: results
// equal the reference's).
#include <cmath>

#include "kernels/cpu/elementwise_kernels.h"
#include "kernels/weight_access.h"

namespace ds::kernels {
namespace {
#include "kernels/elementwise.inc"
}  // namespace

void rms_norm_avx512(const float* x, int64_t dim, const TensorView& w, float eps, float* out, int64_t r_begin,
                  int64_t r_end, float* weight_buffer) {
  rms_norm_rows(x, dim, w, eps, out, r_begin, r_end, weight_buffer);
}
void rms_norm_gated_avx512(const float* x, const float* z, int64_t dim, const TensorView& w, float eps, float* out,
                        int64_t r_begin, int64_t r_end, float* weight_buffer) {
  rms_norm_gated_rows(x, z, dim, w, eps, out, r_begin, r_end, weight_buffer);
}
void silu_mul_avx512(const float* gate, const float* up, float* out, int64_t begin, int64_t end) {
  silu_mul_range(gate, up, out, begin, end);
}
void sigmoid_gate_avx512(float* x, const float* gate, int64_t begin, int64_t end) { sigmoid_gate_range(x, gate, begin, end); }
void add_avx512(float* x, const float* y, int64_t begin, int64_t end) { add_range(x, y, begin, end); }
void rope_avx512(float* x, int64_t heads, int64_t head_dim, const RopeAngles& angles, int64_t t_begin, int64_t t_end) {
  rope_tokens(x, heads, head_dim, angles, t_begin, t_end);
}

}  // namespace ds::kernels
