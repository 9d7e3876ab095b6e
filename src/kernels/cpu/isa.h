// Instruction sets the CPU backend can use, detected at run time so one binary runs everywhere
// (AMX tiles on Sapphire Rapids and later Xeons, AVX-512 with BF16 on Zen 4, AVX2 + FMA on older
// x86, scalar otherwise). Each level includes the ones below it.
#pragma once

#include <string>

namespace ds {

// avx512 = F + BW + VL + BF16; amx = avx512 + AMX-TILE + AMX-BF16 + AMX-INT8 with the tile state
// enabled by the OS (XCR0) and granted to this process (arch_prctl).
enum class Isa { scalar, avx2, avx512, amx };

Isa detect_isa();                      // the best this CPU supports
const char* isa_name(Isa isa);
inline bool has_avx512(Isa isa) { return isa >= Isa::avx512; }
// AVX-512 VNNI (`vpdpbusd`) for the int8 × int8 matmul; without it int8 runs the AVX2 kernel.
bool has_avx512_vnni();
// Why this CPU has no AMX level ("" when it has): a CPU without the instructions, an OS that does
// not save the tile state, or a kernel that refused the permission request.
const std::string& amx_unavailable_reason();
bool parse_isa(const std::string& name, Isa* isa);  // "auto" | "amx" | "avx512" | "avx2" | "scalar"

}  // namespace ds
