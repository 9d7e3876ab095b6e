// Human-readable figures (binary units for bytes, decimal for parameter counts).
#include "util/human.h"

#include <cstdio>

namespace ds {

std::string human_bytes(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  if (unit == 0) std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
  else std::snprintf(text, sizeof text, "%.2f %s", value, kUnits[unit]);
  return text;
}

std::string human_count(uint64_t count) {
  char text[32];
  const double value = static_cast<double>(count);
  if (count >= 1000000000ull) std::snprintf(text, sizeof text, "%.3f B", value / 1e9);
  else if (count >= 1000000ull) std::snprintf(text, sizeof text, "%.1f M", value / 1e6);
  else if (count >= 1000ull) std::snprintf(text, sizeof text, "%.1f K", value / 1e3);
  else std::snprintf(text, sizeof text, "%llu", static_cast<unsigned long long>(count));
  return text;
}

std::string fixed_decimals(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

}  // namespace ds
