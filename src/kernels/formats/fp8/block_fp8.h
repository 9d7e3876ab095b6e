// Block FP8 (`quant_method: "fp8"`, `weight_block_size: [128, 128]`): a Linear's weight [n, k] as
// F8_E4M3 codes (e4m3.h) and its `weight_scale_inv` [ceil(n / 128), ceil(k / 128)] in BF16, F16 or F32,
// one scale per block of 128 rows × 128 inputs (the last blocks partial when n or k is not a multiple
// of 128); w[r, c] = e4m3(code[r, c]) · scale[r / 128, c / 128]. The "_inv" scale is a multiplier.
//
// The value of an element, the reference every layout of it keeps (bit-identical to transformers'
// dequantisation, integrations/finegrained_fp8.py of 5.24.0: the code and the scale widened to fp32
// and multiplied in fp32 — exact for BF16 and F16 scales, rounded to nearest for F32 ones; a model
// loaded in bf16 then rounds that product to bf16 once).
#pragma once

#include <cstdint>
#include <cstring>

#include "io/tensor_view.h"
#include "util/float16.h"

namespace ds {

inline constexpr int64_t kFp8Block = 128;

inline int64_t fp8_blocks(int64_t size) { return (size + kFp8Block - 1) / kFp8Block; }

// Element `index` of a scale tensor of `dtype` (BF16, F16 or F32) as fp32 (exact).
inline float fp8_scale_value(const std::byte* scales, DType dtype, int64_t index) {
  switch (dtype) {
    case DType::BF16: {
      uint16_t bits;
      std::memcpy(&bits, scales + 2 * index, 2);
      return bf16_to_float(bits);
    }
    case DType::F16: {
      uint16_t bits;
      std::memcpy(&bits, scales + 2 * index, 2);
      return fp16_to_float(bits);
    }
    default: {
      float value;
      std::memcpy(&value, scales + 4 * index, 4);
      return value;
    }
  }
}

// The scale of block (row / 128, col / 128) of a block-FP8 view (WeightFormatId::fp8_blocks).
inline float fp8_block_scale(const TensorView& w, int64_t row, int64_t col) {
  return fp8_scale_value(w.block_scales, w.block_scale_dtype, row / kFp8Block * fp8_blocks(w.shape[1]) + col / kFp8Block);
}

}  // namespace ds
