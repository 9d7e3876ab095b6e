// FP8 panels: block-FP8 weights repacked at load into the layout of fp8_panels.h for the AVX-512 FP8
// kernels (fast mode). Values and arithmetic unchanged (fp8_format.h); one byte per weight read.
#pragma once

#include "kernels/formats/fp8/fp8_format.h"

namespace ds {

const Fp8Format& fp8_panels_format();

}  // namespace ds
