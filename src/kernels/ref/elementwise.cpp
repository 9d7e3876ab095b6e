// Reference row-wise and element-wise ops: the shared loops of elementwise.inc over the whole range.
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/ref/ref_backend.h"
#include "kernels/portable_exp.h"
#include "kernels/weight_access.h"

namespace ds {
namespace {
#include "kernels/elementwise.inc"
}  // namespace

void RefBackend::rms_norm(const float* x, int64_t rows, int64_t dim, const TensorView& w, float eps, float* out) {
  std::vector<float> weights(static_cast<size_t>(dim));
  rms_norm_rows(x, dim, w, eps, out, 0, rows, weights.data());
}

void RefBackend::rms_norm_gated(const float* x, const float* z, int64_t rows, int64_t dim, const TensorView& w,
                                float eps, float* out) {
  std::vector<float> weights(static_cast<size_t>(dim));
  rms_norm_gated_rows(x, z, dim, w, eps, out, 0, rows, weights.data());
}

void RefBackend::silu_mul(const float* gate, const float* up, int64_t n, float* out) { silu_mul_range(gate, up, out, 0, n); }
void RefBackend::sigmoid_gate(float* x, const float* gate, int64_t n) { sigmoid_gate_range(x, gate, 0, n); }
void RefBackend::add(float* x, const float* y, int64_t n) { add_range(x, y, 0, n); }

void RefBackend::rope(float* x, int64_t tokens, int64_t heads, int64_t head_dim, const RopeAngles& angles) {
  rope_tokens(x, heads, head_dim, angles, 0, tokens);
}

void RefBackend::copy(void* dst, const void* src, uint64_t bytes) { std::memcpy(dst, src, bytes); }

}  // namespace ds
