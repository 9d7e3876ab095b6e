// Int8 panels (`--weights int8`): weights quantised at load, symmetric per group of 32 inputs of a
// row (w ≈ scale · q, q in [−127, 127], scale = max |w| / 127 over the group), in the panel layout
// of int8_panels.h; the kernels quantise the activations too, per row and group, to int8 or to 16
// bits (int8_activations.h), and multiply in integers (VNNI, or AVX2).
#pragma once

#include "kernels/formats/weight_format.h"

namespace ds {

const WeightFormat& int8_panels_format();

// y = x · wᵀ exactly as the int8 kernels compute it (int8_activations.h), with plain loops: their
// oracle, whatever the compute mode.
void int8_panels_reference_matmul(const float* x, int64_t m, const TensorView& w, float* y);

}  // namespace ds
