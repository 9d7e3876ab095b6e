// Causal softmax attention over a bf16 paged KV cache on AMX tiles (Isa::amx): the scores and the
// weighted sum of V as `tdpbf16ps` tile products, the softmax between them as attention.inc's.
//
// Its arithmetic differs from attention.inc's in two places, both what the tile unit computes:
//   - a score sums the query · key products 16 dim pairs at a time, each step's even dims and odd
//     dims in two partials from +0, added to the running sum as (even + odd); then · scale;
//   - the softmax weights (weight / total, as before) are rounded to bf16, and each output element
//     sums weight · v over 32 keys at a time (keys 32s .. 32s + 31 of the sequence), the even keys'
//     products and the odd keys' in two partials, added as (even + odd).
// Every addition rounds to nearest even; products of two bf16 values are exact in fp32. The plain
// loops of attention_amx_reference.cpp define it; the kernel matches them bit for bit
// (tests/kernels/attention_test.cpp). Each query's result depends on its own row only, so it never
// depends on the batch, the tile or the thread split.
#pragma once

#include <cstdint>

#include "kernels/backend.h"

namespace ds::kernels {

// Whether the AMX kernel takes this cache: bf16, head_dim a multiple of 32 (whole tile steps),
// blocks of a multiple of 16 tokens (a B tile's 16 keys in one block).
bool attention_amx_supports(const KvLayerView& kv);

// Floats of scratch per thread for a call of n queries from start_pos over a GQA group of `group`
// heads: a tile of as many positions as fit an 8 MiB budget (at least one).
int64_t attention_amx_scratch_floats(int64_t n, int64_t start_pos, int64_t group, int64_t head_dim);

// out[n, num_heads, D] for query heads [h_begin, h_end), q [n, num_heads, D]; scratch of
// scratch_floats ≥ attention_amx_scratch_floats(n, start_pos, group, head_dim).
void attention_heads_amx(const float* q, int64_t n, int64_t start_pos, int64_t num_heads, const int32_t* block_table,
                         const KvLayerView& kv, float scale, float* out, int64_t h_begin, int64_t h_end, float* scratch,
                         int64_t scratch_floats);

// The definition in plain loops (ref/attention_amx_reference.cpp): the kernel's oracle.
void attention_amx_reference(const float* q, int64_t n, int64_t start_pos, int64_t num_heads,
                             const int32_t* block_table, const KvLayerView& kv, float scale, float* out);

}  // namespace ds::kernels
