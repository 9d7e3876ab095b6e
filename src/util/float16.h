// bf16 and IEEE fp16 <-> fp32 conversions (scalar). bf16 rounding is round-to-nearest-even,
// as torch's `.to(torch.bfloat16)`, so weights we round match the ones HF computes with.
#pragma once

#include <bit>
#include <cstdint>

namespace ds {

inline float bf16_to_float(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

inline uint16_t float_to_bf16(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);  // quiet NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

float fp16_to_float(uint16_t bits);
uint16_t float_to_fp16(float value);

}  // namespace ds
