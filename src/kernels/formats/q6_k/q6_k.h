// Q6_K (ggml type 14), 210 bytes per 256 weights: 128 bytes of low nibbles, 64 bytes of 2-bit high
// parts, sixteen int8 scales (one per 16 weights) and an fp16 d. Codes q in 0..63; weight e has the
// value (d · sc_{e/16}) · (q − 32) (fp32, gguf-py's order). Half h (128 weights) of the block uses
// nibble bytes 64h .. 64h+63 (low nibbles: its weights 0–63, high: 64–127) and high-bit bytes
// 32h .. 32h+31 (bits 2t, 2t+1 of byte i: its weight 32t + i).
//
// The kernels' arithmetic per group j of 32 inputs (sub-blocks a = 2j, b = 2j + 1 of 16), in fp32:
//   dot_a = Σ_a (q − 32) · xq, dot_b likewise                        (int32, exact in fp32: ≤ 65,024)
//   t = fma(d · sc_a, dot_a, (d · sc_b) · dot_b)                      (d · sc exact: 11 × 8 bits)
//   acc = fma(t, sx, acc)
// — the steps d · sc are a superblock's, computed once per superblock, so a group costs a token two
// converts, a multiply and two fma.
#pragma once

#include "kernels/formats/kquant/kquant_type.h"

namespace ds {

const KquantType& q6_k_type();

namespace kernels {
void matmul_q6_k_avx512(const std::byte* activations, int64_t m, const ActivationOptions& options, const TensorView& w,
                        int64_t panel_begin, int64_t panel_end, float* y);
void matmul_q6_k_avx2(const std::byte* activations, int64_t m, const ActivationOptions& options, const TensorView& w,
                        int64_t panel_begin, int64_t panel_end, float* y);
void matmul_q6_k_amx(const std::byte* activations, int64_t m, const ActivationOptions& options, const TensorView& w,
                    int64_t panel_begin, int64_t panel_end, float* y);
}  // namespace kernels

}  // namespace ds
