// IQ4_XS (ggml type 23), 136 bytes per 256 weights: fp16 d, a u16 and 4 bytes packing eight 6-bit
// scales, then 128 bytes of 4-bit indices into llama.cpp's non-linear table kIq4Values. Group j (32
// weights) has the value (d · (ls_j − 32)) · kIq4Values[q] (fp32, gguf-py's order); its indices are
// bytes 16j .. 16j+15 of the codes, low nibbles its first 16 weights, high nibbles the next 16.
// ls_j = ((scales_l[j/2] >> 4·(j%2)) & 15) | ((scales_h >> 2j) & 3) << 4.
//
// The kernels' arithmetic per group j of 32 inputs, in fp32:
//   acc = fma(Σ kIq4Values[q] · xq, (d · (ls_j − 32)) · sx, acc)
// — the dot exact (≤ 32 · 127 · 127), the step d · (ls_j − 32) exact (11 × 6 bits) and a superblock's,
// so a group costs a token a convert, a multiply and an fma.
#pragma once

#include <cstdint>

#include "kernels/formats/kquant/kquant_type.h"

namespace ds {

// llama.cpp's kvalues_iq4nl (also IQ4_NL's).
inline constexpr int8_t kIq4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

const KquantType& iq4_xs_type();

namespace kernels {
void matmul_iq4_xs_avx512(const std::byte* activations, int64_t m, const ActivationOptions& options, const TensorView& w,
                          int64_t panel_begin, int64_t panel_end, float* y);
void matmul_iq4_xs_avx2(const std::byte* activations, int64_t m, const ActivationOptions& options, const TensorView& w,
                          int64_t panel_begin, int64_t panel_end, float* y);
void matmul_iq4_xs_amx(const std::byte* activations, int64_t m, const ActivationOptions& options, const TensorView& w,
                    int64_t panel_begin, int64_t panel_end, float* y);
}  // namespace kernels

}  // namespace ds
