// What one AMX `tdpbf16ps` computes, in plain loops: the oracle of the AMX bf16 kernel, bit for bit.
//
// A tile product adds 16 input pairs into each fp32 accumulator. Measured on a Xeon with AMX
// (0 differences in 512,000 outputs: inputs scaled by powers of two up to about 2^±24, accumulators
// at 0.1 and 10, 1 to 16 pairs),
// it sums the even inputs' products in order into one fp32 partial, the odd inputs' into another,
// each partial starting at 0, and adds (even + odd) to the accumulator — every addition rounded to
// nearest even. (A chain of `vdpbf16ps`, which adds each pair straight into the accumulator, differs
// in 91% of outputs at k = 2,048.) bf16 × bf16 products are exact in fp32, so only the additions round.
// Denormals, which the hardware flushes to zero, are not modelled: the tests use normal values.
#include <algorithm>

#include "kernels/formats/bf16_panels/bf16_panels_kernels.h"
#include "kernels/formats/reference_rows.h"
#include "util/check.h"

namespace ds::kernels {

void bf16_panels_amx_reference_matmul(const float* x, int64_t m, const TensorView& w, float* y) {
  DS_CHECK(w.format == WeightFormatId::bf16_panels, "AMX bf16 reference on ", w.name);
  reference_rows_matmul(format_of(w), x, m, w, true, y, [](const float* xr, const float* row, int64_t k) {
    float acc = 0.0f;
    for (int64_t first = 0; first < k; first += 2 * kBf16PanelPairAlign) {  // one tile product
      float even = 0.0f, odd = 0.0f;
      for (int64_t i = first; i < std::min(k, first + 2 * kBf16PanelPairAlign); i += 2) {
        even += xr[i] * row[i];
        if (i + 1 < k) odd += xr[i + 1] * row[i + 1];
      }
      acc += even + odd;
    }
    return acc;
  });
}

}  // namespace ds::kernels
