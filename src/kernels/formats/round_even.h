// Rounding to nearest even for the load-time quantisers, as std::nearbyint in the default mode but
// by the 1.5 · 2^23 trick (exact for |v| < 2^22: callers clamp first), so their loops vectorise and
// never call libm (loading the 2B shape took 10–15 s with the libm call in the int8 quantiser).
#pragma once

namespace ds {

inline float round_even(float v) {
  constexpr float kRound = 12582912.0f;
  return (v + kRound) - kRound;
}

}  // namespace ds
