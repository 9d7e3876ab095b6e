// Q4_K's policy for the K-quant drivers (kquant_matmul_avx512.h, kquant_matmul_amx.h): how its codes
// and scales unpack into vectors and how a group's dots enter the accumulator; arithmetic:
// ScaleMinType::accumulate (q4_k.h).
//
// In an unnamed namespace: each kernel's file (VNNI, AMX) compiles its own copy for its own ISA.
#pragma once

#include "kernels/formats/kquant/kquant_matmul_avx512.h"
#include "kernels/formats/q4_k/q4_k.h"
#include "kernels/formats/q4_k/scale_min_avx512.h"

namespace ds::kernels {
namespace {

struct Q4KPolicy : ScaleMinAvx512 {
  static constexpr int64_t kCodeBytes = kNibbleBytes, kSideBytes = 16 * 144 - kCodeBytes;
  static void load_scales(const std::byte* side, Scales& s) { load_scale_min(side, s); }
  static void codes(const std::byte* codes, int64_t j, int v, __m512i& lo, __m512i& hi) { kquant_nibbles(codes, j, v, lo, hi); }
};

}  // namespace
}  // namespace ds::kernels
