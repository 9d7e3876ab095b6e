// Wall time on the steady clock, for the engine's and the benches' timings.
#pragma once

#include <chrono>

namespace ds {

// Seconds from `start` to now.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace ds
