// Reference DeltaNet gates (HF Qwen3_5GatedDeltaNet.forward; spec §4.1 step 5): beta = sigmoid(b),
// g = −exp(A_log) · softplus(a + dt_bias), in fp32.
#include <cmath>

#include "kernels/ref/ref_backend.h"
#include "kernels/weight_access.h"

namespace ds {

void RefBackend::deltanet_gates(const float* a, const float* b, int64_t n, int64_t heads, const TensorView& A_log,
                                const TensorView& dt_bias, float* g, float* beta) {
  for (int64_t h = 0; h < heads; ++h) {
    const float rate = -std::exp(weight_at(A_log, h));
    const float bias = weight_at(dt_bias, h);
    for (int64_t t = 0; t < n; ++t) {
      const float x = a[t * heads + h] + bias;
      const float softplus = x > 20.0f ? x : std::log1p(std::exp(x));  // torch threshold 20
      g[t * heads + h] = rate * softplus;
      beta[t * heads + h] = 1.0f / (1.0f + std::exp(-b[t * heads + h]));
    }
  }
}

}  // namespace ds
