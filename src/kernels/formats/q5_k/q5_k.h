// Q5_K (ggml type 13), 176 bytes per 256 weights: Q4_K's fp16 d, fp16 dmin and 12 scale bytes, then
// 32 bytes of high bits (bit j of byte i: the fifth bit of weight 32j + i) and Q4_K's 128 bytes of
// low nibbles. Codes q in 0..31; the value rule and the arithmetic are Q4_K's (ScaleMinType, q4_k.h).
#pragma once

#include "kernels/formats/kquant/kquant_type.h"

namespace ds {

const KquantType& q5_k_type();

namespace kernels {
void matmul_q5_k_avx512(const std::byte* activations, int64_t m, const ActivationOptions& options, const TensorView& w,
                        int64_t panel_begin, int64_t panel_end, float* y);
void matmul_q5_k_avx2(const std::byte* activations, int64_t m, const ActivationOptions& options, const TensorView& w,
                        int64_t panel_begin, int64_t panel_end, float* y);
void matmul_q5_k_amx(const std::byte* activations, int64_t m, const ActivationOptions& options, const TensorView& w,
                    int64_t panel_begin, int64_t panel_end, float* y);
}  // namespace kernels

}  // namespace ds
