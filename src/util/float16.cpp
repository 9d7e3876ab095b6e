// IEEE binary16 conversions (round-to-nearest-even), scalar reference versions.
#include "util/float16.h"

#include <cmath>

namespace ds {

float fp16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t float_to_fp16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs_bits = bits & 0x7fffffffu;
  if (abs_bits > 0x7f800000u) return sign | 0x7e00u;        // NaN
  if (abs_bits >= 0x477ff000u) return sign | 0x7c00u;       // rounds to >= 65520: inf
  if (abs_bits < 0x38800000u) {                             // below 2^-14: subnormal or zero
    const float magnitude = std::bit_cast<float>(abs_bits);
    return sign | static_cast<uint16_t>(std::nearbyint(magnitude * 16777216.0f));  // / 2^-24
  }
  uint32_t rounded = abs_bits + 0xfffu + ((abs_bits >> 13) & 1u);
  return sign | static_cast<uint16_t>((rounded - (112u << 23)) >> 13);
}

}  // namespace ds
