// Kernels on FP8 panels (fp8_panels.h): AVX-512 for CPUs with AVX-512 BF16 and VBMI (Zen 4, Sapphire
// Rapids and later), AVX2 + FMA + F16C for the others; the arithmetic is fp8_format.h's, bit for bit.
#pragma once

#include <cstdint>

#include "io/tensor_view.h"

namespace ds::kernels {

// y[m, n] for the output rows of panels [panel_begin, panel_end) of w, from activations packed by
// pack_bf16_activations_avx512 (bf16_panels_kernels.h: bf16 token tiles of kBf16TileTokens).
void matmul_fp8_panels_avx512(const uint32_t* xp, int64_t m, const TensorView& w, int64_t panel_begin,
                              int64_t panel_end, float* y);

// The same from fp32 pair rows (bf16_panels_kernels.h: pack_f32_pair_rows, rounded to bf16).
void matmul_fp8_panels_avx2(const float* x, int64_t m, const TensorView& w, int64_t panel_begin, int64_t panel_end,
                            float* y);

}  // namespace ds::kernels
