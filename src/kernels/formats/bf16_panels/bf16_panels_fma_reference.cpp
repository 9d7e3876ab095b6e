// What the AVX2 bf16 panel kernel computes, in plain loops: its oracle, bit for bit. Each output is
// one fp32 fused multiply-add chain that starts at 0 and takes the inputs in order; the weights are
// bf16 widened exactly, the inputs fp32 (rounded to bf16 first in fast mode).
#include <cmath>
#include <vector>

#include "kernels/formats/bf16_panels/bf16_panels_kernels.h"
#include "kernels/formats/weight_format.h"
#include "util/check.h"
#include "util/float16.h"

namespace ds::kernels {

void bf16_panels_fma_reference_matmul(const float* x, int64_t m, const TensorView& w, float* y, bool round_input_bf16) {
  DS_CHECK(w.format == WeightFormatId::bf16_panels && w.shape.size() == 2, "bf16 panel FMA reference on ", w.name);
  const int64_t n = w.shape[0], k = w.shape[1];
  std::vector<float> row(static_cast<size_t>(k));        // [k] one weight row
  std::vector<float> input(static_cast<size_t>(m * k));  // [m, k] as the kernel reads it
  for (int64_t i = 0; i < m * k; ++i) input[i] = round_input_bf16 ? bf16_to_float(float_to_bf16(x[i])) : x[i];
  const WeightFormat& format = format_of(w);
  for (int64_t col = 0; col < n; ++col) {
    format.dequantize_row(w, col, row.data());
    for (int64_t r = 0; r < m; ++r) {
      const float* xr = input.data() + r * k;
      float acc = 0.0f;
      for (int64_t i = 0; i < k; ++i) acc = std::fma(xr[i], row[i], acc);
      y[r * n + col] = acc;
    }
  }
}

}  // namespace ds::kernels
