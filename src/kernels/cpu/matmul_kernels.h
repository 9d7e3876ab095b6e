// Matmul micro-kernels per ISA: y[r, c] = Σ_k x[r, k] · w[c, k] for rows [0, m) and weight rows
// [col_begin, col_end). Every output is accumulated over k in the same fixed order whatever m and
// the column range are, so a row's result never depends on the batch (bit-identical).
#pragma once

#include <cstdint>

#include "io/tensor_view.h"
#include "kernels/int8_activations.h"

namespace ds::kernels {

// AVX-512 BF16: bf16 activations xb [m, k] · bf16 weights (vdpbf16ps, fp32 accumulation).
void matmul_bf16_avx512(const uint16_t* xb, int64_t m, const TensorView& w, int64_t col_begin, int64_t col_end, float* y);
// AVX-512 F: fp32 activations · bf16 / f16 / f32 weights (weights widened to fp32, then FMA).
void matmul_f32_avx512(const float* x, int64_t m, const TensorView& w, int64_t col_begin, int64_t col_end, float* y);
// fp32 → bf16, round to nearest even.
void round_to_bf16_avx512(const float* x, int64_t count, uint16_t* out);

// AVX-512 BF16 on weights in the bf16 panel layout (bf16_panels.h), for panels [panel_begin,
// panel_end) of w (32 output rows each). The activations are packed first: rows [r_begin, r_end) of
// x [m, k] rounded to bf16 (nearest even) into tiles of kBf16TileTokens tokens, tile t at
// t · pairs · kBf16TileTokens words, [pairs][R] words where R is the tile's own token count
// (kBf16TileTokens but for the last tile), each word a token's input pair (2j, 2j + 1), zero past k.
// A tile's words are contiguous, so decode's single token reads one dense vector of pairs (a stride
// of 12 words made a 1-thread decode stream 8% slower, measured).
inline constexpr int64_t kBf16TileTokens = 12;
inline int64_t bf16_activation_words(int64_t m, int64_t k) { return m * ((k + 1) / 2); }
void pack_bf16_activations_avx512(const float* x, int64_t m, int64_t k, int64_t r_begin, int64_t r_end, uint32_t* out);
void matmul_bf16_panels_avx512(const uint32_t* xp, int64_t m, const TensorView& w, int64_t panel_begin,
                               int64_t panel_end, float* y);

// AVX2 + FMA: fp32 activations · bf16 / f16 / f32 weights.
void matmul_f32_avx2(const float* x, int64_t m, const TensorView& w, int64_t col_begin, int64_t col_end, float* y);

// Int8 × int8 (int8_activations.h for the semantics, int8_panels.h for the weight layout), for
// panels [panel_begin, panel_end) of w (32 output rows each). quantize_activations_* fills rows
// [r_begin, r_end) of `a` from x [m, k]; bit-identical to quantize_activation_row_scalar.
void quantize_activations_avx512(const float* x, int64_t k, int64_t r_begin, int64_t r_end, const Int8Activations& a);
void matmul_int8_avx512(const Int8Activations& a, int64_t m, const TensorView& w, int64_t panel_begin,
                        int64_t panel_end, float* y);  // AVX-512 VNNI
void quantize_activations_avx2(const float* x, int64_t k, int64_t r_begin, int64_t r_end, const Int8Activations& a);
void matmul_int8_avx2(const Int8Activations& a, int64_t m, const TensorView& w, int64_t panel_begin, int64_t panel_end,
                      float* y);

}  // namespace ds::kernels
