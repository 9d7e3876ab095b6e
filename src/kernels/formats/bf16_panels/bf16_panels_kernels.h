// AVX-512 BF16, AMX and AVX2 kernels on weights in the bf16 panel layout (bf16_panels.h).
#pragma once

#include <cstdint>

#include "io/tensor_view.h"
#include "kernels/formats/bf16_panels/bf16_panels.h"

namespace ds::kernels {

// For panels [panel_begin, panel_end) of w (32 output rows each). The activations are packed first:
// rows [r_begin, r_end) of x [m, k] rounded to bf16 (nearest even) into tiles of kBf16TileTokens
// tokens, tile t at t · pairs · kBf16TileTokens words, [pairs][R] words where R is the tile's own
// token count (kBf16TileTokens but for the last tile), each word a token's input pair (2j, 2j + 1),
// zero past k. A tile's words are contiguous, so decode's single token reads one dense vector of
// pairs (a stride of 12 words made a 1-thread decode stream 8% slower, measured).
inline constexpr int64_t kBf16TileTokens = 12;
inline int64_t bf16_activation_words(int64_t m, int64_t k) { return m * ((k + 1) / 2); }
void pack_bf16_activations_avx512(const float* x, int64_t m, int64_t k, int64_t r_begin, int64_t r_end, uint32_t* out);
void matmul_bf16_panels_avx512(const uint32_t* xp, int64_t m, const TensorView& w, int64_t panel_begin,
                               int64_t panel_end, float* y);

// AMX (Isa::amx). The activations are bf16 token rows, the A tiles of `tdpbf16ps`: row r of x
// rounded to bf16 (nearest even) at r · bf16_amx_row_words(k) words, each word a token's input pair
// (2j, 2j + 1), zero past k up to the panels' padded pairs; then 16 words of slack so that rows are
// never a multiple of 4 KiB apart (16 rows 4 KiB apart share one L1 set). Rows from m up to a
// multiple of 16 are zero: whole tiles are read.
inline int64_t bf16_amx_row_words(int64_t k) { return bf16_panel_pairs(k) + 16; }
inline int64_t bf16_amx_activation_words(int64_t m, int64_t k) { return (m + 15) / 16 * 16 * bf16_amx_row_words(k); }
void pack_bf16_rows_amx(const float* x, int64_t m, int64_t k, int64_t r_begin, int64_t r_end, uint32_t* out);
void matmul_bf16_panels_amx(const uint32_t* xr, int64_t m, const TensorView& w, int64_t panel_begin, int64_t panel_end,
                            float* y);

// The AMX kernel's oracle: its arithmetic in plain loops (bf16_panels_amx_reference.cpp).
void bf16_panels_amx_reference_matmul(const float* x, int64_t m, const TensorView& w, float* y);

// AVX2 + FMA (Isa::avx2), both modes. The activations are fp32 pair rows: row r of x (rounded to bf16,
// nearest even, in fast mode) at r · bf16_f32_pair_row_floats(k) floats, zero past k, so a token's
// pair j is two adjacent floats at 2j.
inline int64_t bf16_f32_pair_row_floats(int64_t k) { return 2 * bf16_pairs(k); }
void pack_f32_pair_rows(const float* x, int64_t k, bool round_bf16, int64_t r_begin, int64_t r_end, float* out);
void matmul_bf16_panels_avx2(const float* x, int64_t m, const TensorView& w, int64_t panel_begin, int64_t panel_end,
                             float* y);
// Its oracle: each output one fp32 FMA chain from 0 over the inputs in order (bf16_panels_fma_reference.cpp).
void bf16_panels_fma_reference_matmul(const float* x, int64_t m, const TensorView& w, float* y, bool round_input_bf16);

}  // namespace ds::kernels
