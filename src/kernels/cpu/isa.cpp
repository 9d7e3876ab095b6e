// ISA detection through GCC's CPU builtins (cpuid + xgetbv: the OS must save the wide registers),
// and for AMX through cpuid, XCR0 and Linux's permission request for the tile data state.
#include "kernels/cpu/isa.h"

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

namespace ds {

bool has_avx512_vnni();

namespace {

bool has_avx512_bf16() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16");
}

// The tile data state (XFEATURE 18, 8 KiB per thread) is off until a process asks for it: Linux
// then saves it on context switches, and a tile instruction before the request faults (SIGILL).
// The permission is the process's, so one request covers every thread.
constexpr int kArchReqXcompPerm = 0x1023;
constexpr int kXfeatureTileData = 18;

std::string probe_amx() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return "cpuid leaf 7 is missing";
  const bool tile = edx & (1u << 24), bf16 = edx & (1u << 22), int8 = edx & (1u << 25);
  if (!tile || !bf16 || !int8) return "the CPU has no AMX-TILE, AMX-BF16 and AMX-INT8";
  if (!has_avx512_bf16() || !has_avx512_vnni()) return "the CPU has AMX but not AVX-512 BF16 and VNNI";
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & (1u << 27))) return "the OS has not enabled XSAVE";
  uint32_t xcr0_lo = 0, xcr0_hi = 0;
  __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  constexpr uint32_t kTileState = (1u << 17) | (1u << 18);  // XTILECFG, XTILEDATA
  if ((xcr0_lo & kTileState) != kTileState) return "the OS does not save the AMX tile state (XCR0)";
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureTileData) != 0)
    return "the kernel refused the AMX tile permission (arch_prctl ARCH_REQ_XCOMP_PERM; Linux >= 5.16)";
  return "";
}

}  // namespace

const std::string& amx_unavailable_reason() {
  static const std::string reason = probe_amx();  // asks for the permission once
  return reason;
}

Isa detect_isa() {
  if (has_avx512_bf16()) return amx_unavailable_reason().empty() ? Isa::amx : Isa::avx512;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::avx2;
  return Isa::scalar;
}

bool has_avx512_vnni() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512vnni");
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::amx: return "AMX + AVX-512 (BF16)";
    case Isa::avx512: return "AVX-512 (BF16)";
    case Isa::avx2: return "AVX2 + FMA";
    case Isa::scalar: return "scalar";
  }
  return "?";
}

bool parse_isa(const std::string& name, Isa* isa) {
  if (name == "auto") *isa = detect_isa();
  else if (name == "amx") *isa = Isa::amx;
  else if (name == "avx512") *isa = Isa::avx512;
  else if (name == "avx2") *isa = Isa::avx2;
  else if (name == "scalar") *isa = Isa::scalar;
  else return false;
  return true;
}

}  // namespace ds
