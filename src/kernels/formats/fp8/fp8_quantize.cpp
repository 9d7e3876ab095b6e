#include "kernels/formats/fp8/fp8_quantize.h"

#include <algorithm>
#include <cmath>

#include "kernels/formats/fp8/block_fp8.h"
#include "kernels/formats/fp8/e4m3.h"

namespace ds {

void fp8_quantize_block_row(const float* w, int64_t rows, int64_t k, uint8_t* codes, float* inv_scales) {
  for (int64_t b = 0; b < fp8_blocks(k); ++b) {
    const int64_t lo = b * kFp8Block, hi = std::min(k, lo + kFp8Block);
    float max_abs = 0.0f;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = lo; c < hi; ++c) max_abs = std::max(max_abs, std::fabs(w[r * k + c]));
    // torch evaluates `448.0 / tensor` and `1.0 / tensor` as reciprocal() times the number: two roundings.
    const float scale = max_abs > 0.0f ? (1.0f / max_abs) * kE4m3Max : 1.0f;
    inv_scales[b] = 1.0f / scale;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = lo; c < hi; ++c)
        codes[r * k + c] = float_to_e4m3(std::clamp(w[r * k + c] * scale, -kE4m3Max, kE4m3Max));
  }
}

}  // namespace ds
