// Int8 × int8 matmul kernels per ISA (int8_activations.h for the semantics, int8_panels.h for the
// weight layout), for panels [panel_begin, panel_end) of w (32 output rows each).
// quantize_activations_* fills rows [r_begin, r_end) of `a` from x [m, k]; bit-identical to
// quantize_activation_row_scalar.
#pragma once

#include <cstdint>

#include "io/tensor_view.h"
#include "kernels/formats/int8_panels/int8_activations.h"

namespace ds::kernels {

void quantize_activations_avx512(const float* x, int64_t k, int64_t r_begin, int64_t r_end, const Int8Activations& a);
void matmul_int8_avx512(const Int8Activations& a, int64_t m, const TensorView& w, int64_t panel_begin,
                        int64_t panel_end, float* y);  // AVX-512 VNNI
// AMX-INT8 tiles for calls of 2 tokens or more (verifies, prefill), the VNNI kernel for one token.
void matmul_int8_amx(const Int8Activations& a, int64_t m, const TensorView& w, int64_t panel_begin, int64_t panel_end,
                     float* y);
void quantize_activations_avx2(const float* x, int64_t k, int64_t r_begin, int64_t r_end, const Int8Activations& a);
void matmul_int8_avx2(const Int8Activations& a, int64_t m, const TensorView& w, int64_t panel_begin, int64_t panel_end,
                      float* y);

}  // namespace ds::kernels
