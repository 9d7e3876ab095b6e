#include "kernels/cpu/cpu_tuning.h"

#include <cpuid.h>

#include <cstring>

namespace ds {

namespace {

bool genuine_intel() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return false;
  char vendor[13] = {};
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  return std::strcmp(vendor, "GenuineIntel") == 0;
}

CpuTuning detect_tuning() {
  CpuTuning tuning;
  if (genuine_intel()) tuning.decode_prefetch_bytes = 2304;
  return tuning;
}

}  // namespace

const CpuTuning& cpu_tuning() {
  static const CpuTuning tuning = detect_tuning();
  return tuning;
}

}  // namespace ds
