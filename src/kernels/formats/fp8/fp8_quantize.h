// Quantising a weight to block FP8 (block_fp8.h) the way transformers' `Fp8Quantize` does
// (integrations/finegrained_fp8.py, 5.24.0), per 128 × 128 block — a partial block at the edge of its
// own elements, as zero padding to whole blocks would give: max |w| in fp32; scale = 448 / max (1 for
// an all-zero block), which torch computes as (1 / max) · 448, rounding twice; the `weight_scale_inv` =
// 1 / scale (fp32); codes = e4m3(clamp(w · scale, −448, 448)) with torch's rounding (e4m3.h). Checked
// bit for bit against transformers on the FP8 fixtures (tests/kernels/fp8_format_test.cpp).
// `make-checkpoint --dtype fp8` writes these, its scales rounded to BF16 as Qwen's files store them.
#pragma once

#include <cstdint>

namespace ds {

// One row of blocks: w [rows ≤ 128, k] fp32 → codes [rows, k] and inv_scales [ceil(k / 128)].
void fp8_quantize_block_row(const float* w, int64_t rows, int64_t k, uint8_t* codes, float* inv_scales);

}  // namespace ds
