// What every layout of a block-FP8 weight (block_fp8.h) shares: its values and its arithmetic. A
// layout says where a row's codes and a block's scale are; Fp8Format derives the rest from that.
//
// The arithmetic of fast mode (bf16 matmul inputs), the oracle of the FP8 kernels, bit for bit: per
// output, acc = +0; per block b of 128 inputs in order, p = +0, then per input pair (2j, 2j + 1) of
// the block in order p += x̂[2j+1] · q[2j+1], then p += x̂[2j] · q[2j] — x̂ the input rounded to bf16
// (nearest even), q the code's e4m3 value, each product exact in fp32, each sum rounded to nearest:
// the sequence of `vdpbf16ps`, since e4m3 values are exact in bf16 — and acc = fma(scale_b, p, acc).
// An odd k's last pair adds x̂ = 0 times q = 0. So the scale multiplies a block's exact-product sum
// instead of each weight: no weight is rounded (HF's bf16 model rounds each q · scale to bf16), and the
// result differs from the dequantised rows' plain fp32 sum only by rounding (bounded in the tests).
// (`vdpbf16ps` also treats denormal inputs and results as zero; normalised activations times e4m3
// values never come near 2^-126.) In f32 mode (fp32 activations) the reference is the plain one:
// the dequantised rows times the inputs, in input order.
#pragma once

#include <cstdint>

#include "kernels/formats/weight_format.h"

namespace ds {

class Fp8Format : public WeightFormat {
 public:
  // codes[0 .. count) = the e4m3 codes of row `row`, inputs [first, first + count).
  virtual void row_codes(const TensorView& w, int64_t row, int64_t first, int64_t count, uint8_t* codes) const = 0;
  // The scale (fp32, exact) of the block holding row `row` and inputs [128 · block, 128 · block + 128).
  virtual float block_scale(const TensorView& w, int64_t row, int64_t block) const = 0;

  void dequantize_row(const TensorView& w, int64_t row, float* out) const final;
  void reference_matmul(const float* x, int64_t m, const TensorView& w, float* y, bool round_input_bf16) const final;
};

}  // namespace ds
