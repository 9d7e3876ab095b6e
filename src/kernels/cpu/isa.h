// Instruction sets the CPU backend can use, detected at run time so one binary runs everywhere
// (AVX-512 with BF16 on Zen 4 / Sapphire Rapids, AVX2 + FMA on older x86, scalar otherwise).
#pragma once

#include <string>

namespace ds {

enum class Isa { scalar, avx2, avx512 };  // avx512 = F + BW + VL + BF16

Isa detect_isa();                      // the best this CPU supports
const char* isa_name(Isa isa);
// AVX-512 VNNI (`vpdpbusd`) for the int8 × int8 matmul; without it int8 runs the AVX2 kernel.
bool has_avx512_vnni();
bool parse_isa(const std::string& name, Isa* isa);  // "auto" | "avx512" | "avx2" | "scalar"

}  // namespace ds
