// Weights as stored in the checkpoint: row-major [n, k] of bf16, f16 or f32, read in place (mapped)
// or from memory. The format of every weight nothing repacked.
#pragma once

#include "kernels/formats/weight_format.h"

namespace ds {

// The stored format of `dtype` (BF16, F16, F32); an error for any other dtype.
const WeightFormat& row_major_format(DType dtype);

}  // namespace ds
