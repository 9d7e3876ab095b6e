// Block-FP8 weights as the checkpoint stores them (WeightFormatId::fp8_blocks): row-major F8_E4M3
// codes [n, k] read in place, and their `weight_scale_inv` (TensorView::block_scales). Computes with
// the reference (fp8_format.h); the loader packs these into FP8 panels (fp8_panels_format.h) where a
// CPU has the FP8 kernels, or into int8 panels with `--weights int8`.
#pragma once

#include "kernels/formats/fp8/fp8_format.h"

namespace ds {

const Fp8Format& fp8_blocks_format();

}  // namespace ds
