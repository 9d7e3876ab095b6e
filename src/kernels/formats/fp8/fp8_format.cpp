#include "kernels/formats/fp8/fp8_format.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/formats/fp8/block_fp8.h"
#include "kernels/formats/fp8/e4m3.h"
#include "util/float16.h"

namespace ds {

namespace {

// acc + a · b. Not inlined: GCC 12.2 at -O3 vectorises a two-accumulation pair loop like the one
// below into code that reads the wrong elements (kernels/attention.inc has the reproduction); a call
// keeps it scalar.
[[gnu::noinline]] float add_product(float acc, float a, float b) { return acc + a * b; }

}  // namespace

// Block by block, without allocating: an FP8 embedding is read here every decode step.
void Fp8Format::dequantize_row(const TensorView& w, int64_t row, float* out) const {
  const int64_t k = w.shape[1];
  uint8_t codes[kFp8Block];  // one block of the row
  for (int64_t b = 0; b < fp8_blocks(k); ++b) {
    const int64_t first = b * kFp8Block, count = std::min(kFp8Block, k - first);
    row_codes(w, row, first, count, codes);
    const float scale = block_scale(w, row, b);
    for (int64_t i = 0; i < count; ++i) out[first + i] = e4m3_to_float(codes[i]) * scale;
  }
}

void Fp8Format::reference_matmul(const float* x, int64_t m, const TensorView& w, float* y, bool round_input_bf16) const {
  if (!round_input_bf16) return WeightFormat::reference_matmul(x, m, w, y, false);
  const int64_t n = w.shape[0], k = w.shape[1], padded = (k + 1) / 2 * 2;
  std::vector<float> input(static_cast<size_t>(m * padded), 0.0f);  // [m, k rounded up to even] x̂, zero-padded
  for (int64_t r = 0; r < m; ++r)
    for (int64_t i = 0; i < k; ++i) input[r * padded + i] = bf16_to_float(float_to_bf16(x[r * k + i]));
  std::vector<uint8_t> codes(static_cast<size_t>(padded), 0);  // [k rounded up to even] one row, zero-padded
  std::vector<float> q(static_cast<size_t>(padded));
  for (int64_t col = 0; col < n; ++col) {
    row_codes(w, col, 0, k, codes.data());
    for (int64_t i = 0; i < padded; ++i) q[i] = e4m3_to_float(codes[i]);
    for (int64_t r = 0; r < m; ++r) {
      const float* xr = input.data() + r * padded;
      float acc = 0.0f;
      for (int64_t b = 0; b < fp8_blocks(k); ++b) {
        float p = 0.0f;
        for (int64_t i = b * kFp8Block; i < std::min(padded, (b + 1) * kFp8Block); i += 2) {
          p = add_product(p, xr[i + 1], q[i + 1]);
          p = add_product(p, xr[i], q[i]);
        }
        acc = std::fma(block_scale(w, col, b), p, acc);
      }
      y[r * n + col] = acc;
    }
  }
}

}  // namespace ds
