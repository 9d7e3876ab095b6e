#include "kernels/cpu/cpu_tuning.h"

#include <cpuid.h>

#include <cstring>

namespace ds {

namespace {

bool vendor_is(const char* name) {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return false;
  char vendor[13] = {};
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  return std::strcmp(vendor, name) == 0;
}

// CPUID leaf 1's family: base family, plus the extended family when the base is 15 (AMD's Zen 4 is
// 25, Zen 5 26).
unsigned cpu_family() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
  const unsigned base = (eax >> 8) & 0xf;
  return base == 0xf ? base + ((eax >> 20) & 0xff) : base;
}

CpuTuning detect_tuning() {
  CpuTuning tuning;
  if (vendor_is("GenuineIntel")) {
    tuning.decode_prefetch = {2304, 3};
    tuning.kquant_decode_prefetch = {{18 * 1024, 3}, true, true};
  }
  // Family 25 is Zen 3 and Zen 4; of the two only Zen 4 has AVX-512.
  if (vendor_is("AuthenticAMD") && cpu_family() == 25)
    tuning.kquant_decode_prefetch = __builtin_cpu_supports("avx512f") ? KquantPrefetch{{48 * 1024}, true} : KquantPrefetch{{3072}, false};
  return tuning;
}

}  // namespace

const CpuTuning& cpu_tuning() {
  static const CpuTuning tuning = detect_tuning();
  return tuning;
}

}  // namespace ds
