// Q5_K's policy for the K-quant drivers (kquant_matmul_avx512.h, kquant_matmul_amx.h): how its codes
// and scales unpack into vectors and how a group's dots enter the accumulator; Q4_K's with the fifth
// code bit added from the superblock's masks; arithmetic: ScaleMinType::accumulate (q4_k.h).
//
// In an unnamed namespace: each kernel's file (VNNI, AMX) compiles its own copy for its own ISA.
#pragma once

#include "kernels/formats/kquant/kquant_matmul_avx512.h"
#include "kernels/formats/q4_k/scale_min_avx512.h"
#include "kernels/formats/q5_k/q5_k.h"

namespace ds::kernels {
namespace {

struct Q5KPolicy : ScaleMinAvx512 {
  static constexpr int64_t kCodeBytes = kNibbleBytes + 512, kSideBytes = 16 * 176 - kCodeBytes;
  static void load_scales(const std::byte* side, Scales& s) { load_scale_min(side, s); }
  static void codes(const std::byte* codes, int64_t j, int v, __m512i& lo, __m512i& hi) {
    kquant_nibbles(codes, j, v, lo, hi);
    const std::byte* masks = codes + kNibbleBytes + 64 * j;  // mask u of group j at 8·u
    uint64_t mask_lo, mask_hi;
    std::memcpy(&mask_lo, masks + 8 * v, 8);
    std::memcpy(&mask_hi, masks + 8 * (v + 4), 8);
    const __m512i sixteen = _mm512_set1_epi8(16);
    lo = _mm512_mask_add_epi8(lo, _cvtu64_mask64(mask_lo), lo, sixteen);
    hi = _mm512_mask_add_epi8(hi, _cvtu64_mask64(mask_hi), hi, sixteen);
  }
};

}  // namespace
}  // namespace ds::kernels
