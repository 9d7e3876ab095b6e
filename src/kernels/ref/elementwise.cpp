// Reference element-wise ops: SwiGLU product, sigmoid output gate, residual add.
#include <cmath>

#include "kernels/ref/ref_backend.h"

namespace ds {

void RefBackend::silu_mul(const float* gate, const float* up, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void RefBackend::sigmoid_gate(float* x, const float* gate, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] *= 1.0f / (1.0f + std::exp(-gate[i]));
}

void RefBackend::add(float* x, const float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

}  // namespace ds
