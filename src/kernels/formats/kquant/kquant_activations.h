// The activations the K-quant kernels read: each token's row quantised to int8 per group of 32
// inputs exactly as the int8 panels' codec does (int8_activations.h: sx = amax / 127, q = round to
// nearest even of x · (127 / amax)), so a row's codes never depend on the batch, plus the sums the
// K-quant arithmetic needs: sx · Σ q over each group (the Q4_K / Q5_K minimum term, rounded once to
// fp32) and Σ q over each half of 16 (Q6_K's and IQ4_XS's code offsets, taken out per half).
//
// Finer than llama.cpp's own activations for these types (Q8_K: one scale per 256 inputs), at one
// fp32 scale per 32 inputs.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/formats/int8_panels/int8_activations.h"
#include "kernels/formats/weight_format.h"

namespace ds {

struct KquantActivations {
  Int8Activations codes;       // q [m, groups · 32], scales [m, groups] (one plane)
  const float* scaled_sums;    // [m, groups] fl(sx · Σ q) over the group
  // [m, groups, 2] −Σ q over inputs 0–15 and 16–31 of the group: negated, so a kernel's code offset
  // (Q6_K's 32, IQ4_XS's 128) becomes a broadcast and a shift.
  const int32_t* neg_half_sums;
  // sx and fl(sx · Σ q) again, ordered by tiles of kKquantTokenTile tokens: [⌈m / 16⌉, groups, 16]
  // (a last tile's missing tokens left alone). The AMX kernel's finish reads a group's 16 tokens
  // from one pointer; through 16 row pointers it ran out of registers (Q6_K 25–30% slower, GCC 12).
  const float* tile_scales;
  const float* tile_scaled_sums;
};
inline constexpr int64_t kKquantTokenTile = 16;

// The buffer of m rows: the int8 codec's (q, scales, −128 · Σq) then half sums, sums and the tiles'
// scales and sums.
uint64_t kquant_activation_bytes(int64_t m, int64_t k);
KquantActivations kquant_activations_in(const std::byte* buffer, int64_t m, int64_t k);

// The codecs: fill rows [r_begin, r_end) with the AVX-512 or the AVX2 quantiser (both bit-identical
// to the scalar one).
extern const ActivationCodec kKquantVnniActivations;
extern const ActivationCodec kKquantAvx2Activations;

}  // namespace ds
