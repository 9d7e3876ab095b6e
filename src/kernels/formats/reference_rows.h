// The loops every reference matmul shares: each output row of w dequantised once, each token's
// inputs as the kernels read them (rounded to bf16 in fast mode), and one output = dot(inputs, row, k)
// for a `dot` that states how the kernel sums its products.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/formats/weight_format.h"
#include "util/check.h"
#include "util/float16.h"

namespace ds {

// y[m, n] = dot(x row r, w row col, k) for every r and col, w's rows as `format` dequantises them.
template <class Dot>
void reference_rows_matmul(const WeightFormat& format, const float* x, int64_t m, const TensorView& w,
                           bool round_input_bf16, float* y, Dot dot) {
  DS_CHECK(w.shape.size() == 2, "matmul weight ", w.name, " must be 2-D");
  const int64_t n = w.shape[0], k = w.shape[1];
  std::vector<float> row(static_cast<size_t>(k));        // [k] one weight row
  std::vector<float> input(static_cast<size_t>(m * k));  // [m, k] as the kernels read them
  for (int64_t i = 0; i < m * k; ++i) input[i] = round_input_bf16 ? bf16_to_float(float_to_bf16(x[i])) : x[i];
  for (int64_t col = 0; col < n; ++col) {
    format.dequantize_row(w, col, row.data());
    for (int64_t r = 0; r < m; ++r) y[r * n + col] = dot(input.data() + r * k, row.data(), k);
  }
}

}  // namespace ds
