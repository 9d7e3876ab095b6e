// The int8 kernels' oracle: the same integer and fp32 arithmetic with plain loops.
#include <cmath>
#include <vector>

#include "kernels/formats/int8_panels/int8_activations.h"
#include "kernels/formats/int8_panels/int8_panels.h"
#include "kernels/formats/int8_panels/int8_panels_format.h"
#include "util/check.h"

namespace ds {

// Int8 weights: the activations are quantised per row and group too (int8_activations.h, which
// defines the semantics the fast kernels reproduce bit for bit), whatever the compute mode.
void int8_panels_reference_matmul(const float* x, int64_t m, const TensorView& w, float* y) {
  DS_CHECK(w.format == WeightFormatId::int8_panels && w.shape.size() == 2, "int8 reference matmul on ", w.name);
  const int64_t n = w.shape[0], k = w.shape[1], groups = int8_groups(k), padded = groups * kInt8ScaleGroup;
  const int64_t planes = w.activation_planes;
  DS_CHECK(planes == 1 || planes == 2, "activation planes ", planes, " of ", w.name);
  std::vector<int8_t> planed(static_cast<size_t>(m * planes * padded));
  std::vector<float> x_scales(static_cast<size_t>(m * groups));
  std::vector<int32_t> offsets(static_cast<size_t>(m * planes * groups));
  const Int8Activations a{planed.data(), x_scales.data(), offsets.data(), groups, planes};
  for (int64_t r = 0; r < m; ++r) quantize_activation_row_scalar(x + r * k, k, r, a);
  std::vector<int32_t> xq(static_cast<size_t>(m * padded));  // q, or q16 = 256 · hi + lo
  for (int64_t r = 0; r < m; ++r)
    for (int64_t i = 0; i < padded; ++i) {
      const int8_t* row = planed.data() + r * planes * padded;
      xq[r * padded + i] = planes == 1 ? row[i] : 256 * row[i] + row[padded + i];
    }
  std::vector<int32_t> wq(static_cast<size_t>(padded), 0);  // one weight row, zeros past k
  std::vector<float> w_scales(static_cast<size_t>(groups));
  for (int64_t col = 0; col < n; ++col) {
    for (int64_t i = 0; i < k; ++i) wq[i] = int8_weight_q(w, col, i);
    for (int64_t g = 0; g < groups; ++g) w_scales[g] = int8_weight_scale(w, col, g);
    for (int64_t r = 0; r < m; ++r) {
      const int32_t* xr = xq.data() + r * padded;
      float acc = 0.0f;
      for (int64_t g = 0; g < groups; ++g) {
        int32_t dot = 0;  // exact (|dot| < 2^28)
        for (int64_t i = g * kInt8ScaleGroup; i < (g + 1) * kInt8ScaleGroup; ++i) dot += wq[i] * xr[i];
        const float scale = w_scales[g] * x_scales[r * groups + g];
        acc = std::fma(static_cast<float>(dot), scale, acc);  // float(dot): round to nearest even
      }
      y[r * n + col] = acc;
    }
  }
}

}  // namespace ds
