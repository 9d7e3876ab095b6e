// Row-major matmul kernels per ISA (weights as stored in the checkpoint: [n, k] of bf16 / f16 / f32):
// y[r, c] = Σ_k x[r, k] · w[c, k] for rows [0, m) and weight rows [col_begin, col_end). Every output
// is accumulated over k in the same fixed order whatever m and the column range are, so a row's
// result never depends on the batch (bit-identical).
#pragma once

#include <cstdint>

#include "io/tensor_view.h"

namespace ds::kernels {

// AVX-512 BF16: bf16 activations xb [m, k] · bf16 weights (vdpbf16ps, fp32 accumulation).
void matmul_bf16_avx512(const uint16_t* xb, int64_t m, const TensorView& w, int64_t col_begin, int64_t col_end, float* y);
// AVX-512 F: fp32 activations · bf16 / f16 / f32 weights (weights widened to fp32, then FMA).
void matmul_f32_avx512(const float* x, int64_t m, const TensorView& w, int64_t col_begin, int64_t col_end, float* y);
// fp32 → bf16, round to nearest even.
void round_to_bf16_avx512(const float* x, int64_t count, uint16_t* out);
// AVX2 + FMA: fp32 activations · bf16 / f16 / f32 weights.
void matmul_f32_avx2(const float* x, int64_t m, const TensorView& w, int64_t col_begin, int64_t col_end, float* y);

}  // namespace ds::kernels
