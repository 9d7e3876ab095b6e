// bf16 / fp16 conversions against exhaustive round trips and known rounding cases.
#include "util/float16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace ds {
namespace {

TEST(Float16, Bf16RoundTripsEveryFiniteValue) {
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    const float value = bf16_to_float(static_cast<uint16_t>(bits));
    if (std::isnan(value)) continue;
    EXPECT_EQ(float_to_bf16(value), bits);
  }
}

TEST(Float16, Bf16RoundsToNearestEven) {
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x3f808000u)), 0x3f80);  // tie, even stays
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x3f818000u)), 0x3f82);  // tie, odd rounds up
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x3f808001u)), 0x3f81);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(Float16, Fp16RoundTripsEveryValue) {
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    const float value = fp16_to_float(static_cast<uint16_t>(bits));
    if (std::isnan(value)) continue;
    EXPECT_EQ(float_to_fp16(value), bits) << std::hex << bits;
  }
}

TEST(Float16, Fp16KnownValuesAndRounding) {
  EXPECT_EQ(float_to_fp16(1.0f), 0x3c00);
  EXPECT_EQ(float_to_fp16(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_fp16(65520.0f), 0x7c00);               // rounds to inf
  EXPECT_EQ(float_to_fp16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_fp16(std::ldexp(1.0f, -25)), 0x0000);  // tie to even (zero)
  EXPECT_EQ(float_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie to even
  EXPECT_FLOAT_EQ(fp16_to_float(0xc000), -2.0f);
}

}  // namespace
}  // namespace ds
