#include "kernels/formats/fp8/e4m3.h"

#include <array>
#include <bit>
#include <cmath>
#include <limits>

namespace ds {

namespace {

const std::array<float, 256>& e4m3_values() {
  static const std::array<float, 256> values = [] {
    std::array<float, 256> table{};
    for (int code = 0; code < 256; ++code) {
      const int exponent = (code >> 3) & 15, mantissa = code & 7;
      float magnitude = exponent == 0 ? std::ldexp(static_cast<float>(mantissa), -9)  // subnormal: m · 2^-9
                                      : std::ldexp(1.0f + static_cast<float>(mantissa) / 8.0f, exponent - 7);
      if (exponent == 15 && mantissa == 7) magnitude = std::numeric_limits<float>::quiet_NaN();
      table[static_cast<size_t>(code)] = code & 0x80 ? -magnitude : magnitude;
    }
    return table;
  }();
  return values;
}

}  // namespace

float e4m3_to_float(uint8_t code) { return e4m3_values()[code]; }

uint8_t float_to_e4m3(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const auto sign = static_cast<uint8_t>((bits >> 24) & 0x80);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return sign | 0x7f;                             // NaN
  if (magnitude >= std::bit_cast<uint32_t>(kE4m3Max)) return sign | 0x7e;     // saturate (±inf too)
  if (magnitude < std::bit_cast<uint32_t>(0x1p-6f)) {                          // subnormal codes 0 .. 8
    // |v| · 2^9 is exact; adding and subtracting 1.5 · 2^23 rounds it to an integer, ties to even.
    const float scaled = std::bit_cast<float>(magnitude) * 512.0f;
    return sign | static_cast<uint8_t>((scaled + 12582912.0f) - 12582912.0f);
  }
  // Normal: keep 3 of the 23 mantissa bits, nearest with ties to even (a carry moves the exponent up,
  // as it should), then rebias the exponent from 127 to 7. 447.99… rounds to 448 at most.
  const uint32_t rounded = (magnitude + 0x7ffffu + ((magnitude >> 20) & 1u)) >> 20;
  return sign | static_cast<uint8_t>(rounded - ((127u - 7u) << 3));
}

}  // namespace ds
