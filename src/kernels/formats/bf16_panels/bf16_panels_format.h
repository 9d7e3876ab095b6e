// Bf16 panels: bf16 weights repacked at load into the layout of bf16_panels.h for the AVX-512 BF16,
// AMX and AVX2 kernels (fast mode). Values unchanged (a pure permutation); the win is speed — one
// sequential stream per thread for decode, an outer-product kernel with no horizontal sums for
// prefill (docs/benchmarks.md).
#pragma once

#include "kernels/formats/weight_format.h"

namespace ds {

const WeightFormat& bf16_panels_format();

// The activations its AVX-512 kernel reads (bf16 token tiles, bf16_panels_kernels.h). Formats whose
// kernels read the same return this codec too, so a layer's neighbours prepare their input once.
const ActivationCodec& bf16_token_tiles();
// The activations of its AVX2 kernel (fp32 pair rows, bf16_panels_kernels.h).
const ActivationCodec& bf16_f32_pair_rows();

}  // namespace ds
