// Reference RMSNorms: zero-centred (HF Qwen3_5RMSNorm, scale 1 + w) and gated (Qwen3_5RMSNormGated,
// plain weight, SiLU of the gate), spec §3.1–3.2. Sums of squares accumulate in fp32 in index order.
#include <cmath>

#include "kernels/ref/ref_backend.h"
#include "kernels/weight_access.h"

namespace ds {
namespace {
float inverse_rms(const float* x, int64_t dim, float eps) {
  float sum = 0.0f;
  for (int64_t i = 0; i < dim; ++i) sum += x[i] * x[i];
  return 1.0f / std::sqrt(sum / static_cast<float>(dim) + eps);
}
}  // namespace

void RefBackend::rms_norm(const float* x, int64_t rows, int64_t dim, const TensorView& w, float eps, float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const float scale = inverse_rms(x + r * dim, dim, eps);
    for (int64_t i = 0; i < dim; ++i) out[r * dim + i] = x[r * dim + i] * scale * (1.0f + weight_at(w, i));
  }
}

void RefBackend::rms_norm_gated(const float* x, const float* z, int64_t rows, int64_t dim, const TensorView& w,
                                float eps, float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const float scale = inverse_rms(x + r * dim, dim, eps);
    for (int64_t i = 0; i < dim; ++i) {
      const float gate = z[r * dim + i];
      out[r * dim + i] = weight_at(w, i) * (x[r * dim + i] * scale) * (gate / (1.0f + std::exp(-gate)));
    }
  }
}

}  // namespace ds
