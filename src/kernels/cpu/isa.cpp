// ISA detection through GCC's CPU builtins (cpuid + xgetbv: the OS must save the wide registers).
#include "kernels/cpu/isa.h"

namespace ds {

Isa detect_isa() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bf16"))
    return Isa::avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::avx2;
  return Isa::scalar;
}

bool has_avx512_vnni() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512vnni");
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::avx512: return "AVX-512 (BF16)";
    case Isa::avx2: return "AVX2 + FMA";
    case Isa::scalar: return "scalar";
  }
  return "?";
}

bool parse_isa(const std::string& name, Isa* isa) {
  if (name == "auto") *isa = detect_isa();
  else if (name == "avx512") *isa = Isa::avx512;
  else if (name == "avx2") *isa = Isa::avx2;
  else if (name == "scalar") *isa = Isa::scalar;
  else return false;
  return true;
}

}  // namespace ds
