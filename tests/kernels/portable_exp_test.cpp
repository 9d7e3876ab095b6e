// portable_exp (the vectorisable e^x of SiLU and sigmoid) against std::exp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/portable_exp.h"

namespace ds {
namespace {

int64_t ulps_apart(float a, float b) {
  int32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return std::abs(static_cast<int64_t>(x) - y);
}

// Every float in [ln FLT_MIN, 0] (the softmax's range; ~8.7M points) against exp in double.
TEST(PortableExp, WithinOneUlpOfExpOnEveryFloatDownToFltMin) {
  int64_t worst = 0;
  for (float x = 0.0f; x >= -87.33f; x = std::nextafter(x, -100.0f) - 1e-5f) {
    const auto exact = static_cast<float>(std::exp(static_cast<double>(x)));
    worst = std::max(worst, ulps_apart(portable_exp(x), exact));
  }
  EXPECT_LE(worst, 1);
  EXPECT_EQ(portable_exp(0.0f), 1.0f);
  EXPECT_EQ(portable_exp(-0.0f), 1.0f);
}

TEST(PortableExp, WithinOneUlpOfStdExpOverTheNormalRange) {
  int64_t worst = 0;
  float worst_at = 0.0f;
  int64_t checked = 0;
  for (float x = -87.3f; x < 88.3f; x += 0.000731f + std::fabs(x) * 1e-5f, ++checked) {
    const int64_t ulps = ulps_apart(portable_exp(x), std::exp(x));
    if (ulps > worst) worst = ulps, worst_at = x;
  }
  for (float x : {0.0f, -0.0f, 1e-30f, -1e-30f, 0.5f, -0.5f, 0.34657359f, 1.0f, -1.0f}) {
    const int64_t ulps = ulps_apart(portable_exp(x), std::exp(x));
    if (ulps > worst) worst = ulps, worst_at = x;
  }
  EXPECT_GT(checked, 100000);
  EXPECT_LE(worst, 1) << "at x = " << worst_at;
}

TEST(PortableExp, ZeroBelowTheNormalRangeClampedAboveNaNKept) {
  EXPECT_EQ(portable_exp(-87.4f), 0.0f);
  EXPECT_EQ(portable_exp(-1000.0f), 0.0f);
  EXPECT_GE(portable_exp(-87.33f), std::ldexp(1.0f, -126));
  EXPECT_TRUE(std::isfinite(portable_exp(1000.0f)));
  EXPECT_GT(portable_exp(1000.0f), 2e38f);
  EXPECT_TRUE(std::isfinite(portable_exp(INFINITY)));
  EXPECT_EQ(portable_exp(-INFINITY), 0.0f);
  EXPECT_TRUE(std::isnan(portable_exp(NAN)));
  // SiLU at the ends, as the kernels compute it: x / (1 + e^−x), equal to std::exp's.
  EXPECT_EQ(100.0f / (1.0f + portable_exp(-100.0f)), 100.0f);
  EXPECT_EQ(-100.0f / (1.0f + portable_exp(100.0f)), -100.0f / (1.0f + std::exp(88.37f)));
}

}  // namespace
}  // namespace ds
