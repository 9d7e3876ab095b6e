// AVX-512 BF16 kernels on weights in the bf16 panel layout (bf16_panels.h).
#pragma once

#include <cstdint>

#include "io/tensor_view.h"

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

}  // namespace ds::kernels
