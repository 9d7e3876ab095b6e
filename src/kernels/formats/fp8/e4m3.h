// FP8 E4M3 as block-FP8 checkpoints store it (safetensors F8_E4M3, torch.float8_e4m3fn, OCP "e4m3fn"):
// 1 sign, 4 exponent (bias 7) and 3 mantissa bits; no infinities; S.1111.111 is NaN; the largest
// finite value 448, the smallest subnormal 2^-9. Every value is exact in bf16 and fp32.
#pragma once

#include <cstdint>

namespace ds {

inline constexpr float kE4m3Max = 448.0f;

// The value of a code (exact).
float e4m3_to_float(uint8_t code);

// torch's float32 → float8_e4m3fn conversion (`.to(torch.float8_e4m3fn)` on CPU, checked against it on
// every bf16 value and random floats, tests/kernels/fp8_format_test.cpp): nearest, ties to even;
// finite values beyond 448 saturate to ±448; NaN stays NaN.
uint8_t float_to_e4m3(float value);

}  // namespace ds
