// Q4_K (ggml type 12), 144 bytes per 256 weights: fp16 d, fp16 dmin, 12 bytes packing eight 6-bit
// scales and eight 6-bit minimums, then 128 bytes of 4-bit codes q. Group j (32 weights) has the value
//   w = (d · sc_j) · q − dmin · m_j
// (fp32, in that order: gguf-py's dequantisation). Codes: chunk c (64 weights) is bytes 32c .. 32c+31
// of the codes, the low nibbles its first 32 weights, the high nibbles the next 32.
//
// Q5_K shares the header fields and the value rule with one more code bit (q5_k/), so the scale
// packing and the arithmetic of this family live here: ScaleMinType.
#pragma once

#include <cstdint>

#include "kernels/formats/kquant/kquant_type.h"

namespace ds {

const KquantType& q4_k_type();

// Scale and minimum of group j (0..7) from llama.cpp's 12-byte packing: bytes 0–3 hold the low 6 bits
// of sc_0..3, bytes 4–7 those of m_0..3, their top 2 bits the high bits of sc_4..7 / m_4..7, whose
// low 4 bits are the nibbles of bytes 8–11.
void k_scale_min(const uint8_t* scales12, int64_t j, int* sc, int* m);

// A type whose blocks start with fp16 d, fp16 dmin and the 12 scale bytes, and whose group j has the
// value (d · sc_j) · q − dmin · m_j. The kernels' arithmetic per group of 32 inputs (x ≈ sx · xq):
//   acc = fma(float(Σ q · xq), (d · sc_j) · sx, acc)
//   acc = fma(−(dmin · m_j), sx · Σ xq, acc)        (sx · Σ xq: the activations', rounded once)
class ScaleMinType : public KquantType {
 public:
  using KquantType::KquantType;
  void dequantize(const std::byte* block, float* out) const override;
  float accumulate(const std::byte* block, const uint8_t* codes, int64_t j, const ActivationGroup& x,
                   float acc) const override;
  bool quantizes() const override { return true; }
  void quantize(const float* values, std::byte* block) const override;  // scale_min_quantize.cpp
};

// Its header fields, in KquantField form (d, dmin, scales: the unit's side bytes).
inline constexpr KquantField kScaleMinFields[] = {{0, 2, 1}, {2, 2, 1}, {4, 1, 12}};

namespace kernels {
void matmul_q4_k_avx512(const std::byte* activations, int64_t m, const ActivationOptions& options, const TensorView& w,
                        int64_t panel_begin, int64_t panel_end, float* y);
void matmul_q4_k_avx2(const std::byte* activations, int64_t m, const ActivationOptions& options, const TensorView& w,
                        int64_t panel_begin, int64_t panel_end, float* y);
void matmul_q4_k_amx(const std::byte* activations, int64_t m, const ActivationOptions& options, const TensorView& w,
                    int64_t panel_begin, int64_t panel_end, float* y);
}  // namespace kernels

}  // namespace ds
