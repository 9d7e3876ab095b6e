// What the AVX2 bf16 panel kernel computes, in plain loops: its oracle, bit for bit. Each output is
// one fp32 fused multiply-add chain that starts at 0 and takes the inputs in order; the weights are
// bf16 widened exactly, the inputs fp32 (rounded to bf16 first in fast mode).
#include <cmath>

#include "kernels/formats/bf16_panels/bf16_panels_kernels.h"
#include "kernels/formats/reference_rows.h"
#include "util/check.h"

namespace ds::kernels {

void bf16_panels_fma_reference_matmul(const float* x, int64_t m, const TensorView& w, float* y, bool round_input_bf16) {
  DS_CHECK(w.format == WeightFormatId::bf16_panels, "bf16 panel FMA reference on ", w.name);
  reference_rows_matmul(format_of(w), x, m, w, round_input_bf16, y, [](const float* xr, const float* row, int64_t k) {
    float acc = 0.0f;
    for (int64_t i = 0; i < k; ++i) acc = std::fma(xr[i], row[i], acc);
    return acc;
  });
}

}  // namespace ds::kernels
