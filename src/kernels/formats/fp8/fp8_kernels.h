// AVX-512 kernels on FP8 panels (fp8_panels.h), for CPUs with AVX-512 BF16 and VBMI (Zen 4, Sapphire
// Rapids and later); the arithmetic is fp8_format.h's, bit for bit.
#pragma once

#include <cstdint>

#include "io/tensor_view.h"

namespace ds::kernels {

// y[m, n] for the output rows of panels [panel_begin, panel_end) of w, from activations packed by
// pack_bf16_activations_avx512 (bf16_panels_kernels.h: bf16 token tiles of kBf16TileTokens).
void matmul_fp8_panels_avx512(const uint32_t* xp, int64_t m, const TensorView& w, int64_t panel_begin,
                              int64_t panel_end, float* y);

}  // namespace ds::kernels
