// Matmul micro-kernels per ISA: y[r, c] = Σ_k x[r, k] · w[c, k] for rows [0, m) and weight rows
// [col_begin, col_end). Every output is accumulated over k in the same fixed order whatever m and
// the column range are, so a row's result never depends on the batch (bit-identical).
#pragma once

#include <cstdint>

#include "io/tensor_view.h"
#include "kernels/int8_activations.h"

namespace ds::kernels {

// AVX-512 BF16: bf16 activations xb [m, k] · bf16 weights (vdpbf16ps, fp32 accumulation).
void matmul_bf16_avx512(const uint16_t* xb, int64_t m, const TensorView& w, int64_t col_begin, int64_t col_end, float* y);
// AVX-512 F: fp32 activations · bf16 / f16 / f32 weights (weights widened to fp32, then FMA).
void matmul_f32_avx512(const float* x, int64_t m, const TensorView& w, int64_t col_begin, int64_t col_end, float* y);
// fp32 → bf16, round to nearest even.
void round_to_bf16_avx512(const float* x, int64_t count, uint16_t* out);

// AVX2 + FMA: fp32 activations · bf16 / f16 / f32 weights.
void matmul_f32_avx2(const float* x, int64_t m, const TensorView& w, int64_t col_begin, int64_t col_end, float* y);

// Int8 × int8 (int8_activations.h for the semantics, int8_panels.h for the weight layout), for
// panels [panel_begin, panel_end) of w (32 output rows each). quantize_activations_* fills rows
// [r_begin, r_end) of `a` from x [m, k]; bit-identical to quantize_activation_row_scalar.
void quantize_activations_avx512(const float* x, int64_t k, int64_t r_begin, int64_t r_end, const Int8Activations& a);
void matmul_int8_avx512(const Int8Activations& a, int64_t m, const TensorView& w, int64_t panel_begin,
                        int64_t panel_end, float* y);  // AVX-512 VNNI
void quantize_activations_avx2(const float* x, int64_t k, int64_t r_begin, int64_t r_end, const Int8Activations& a);
void matmul_int8_avx2(const Int8Activations& a, int64_t m, const TensorView& w, int64_t panel_begin, int64_t panel_end,
                      float* y);

}  // namespace ds::kernels
