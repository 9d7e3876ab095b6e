// Q8_0, llama.cpp's 8-bit block type (GGUF tensors of ggml type 8): each row of k inputs is k / 32
// blocks of 34 bytes, an fp16 scale d then 32 int8 values q, and w = d · q. Every q in [−128, 127]
// is legal (llama.cpp's own quantiser writes [−127, 127]).
//
// Two formats live here. q8_0_format(): the blocks as the file stores them, read in place; its
// dequantize_row is the reference (bit-identical to gguf-py's gguf.quants.dequantize: fp16 d to
// fp32, times q, in fp32 — exact, as d · q needs at most 19 significant bits), and it computes with
// the plain reference matmul. q8_0_int8_panels_route(): how a Q8_0 weight becomes int8 panels
// (kernels/formats/int8_panels/) at load, losslessly — the same groups of 32 inputs, q kept (stored
// + 128 as the panels store every q; −128 becomes byte 0, which the panels' kernels read exactly,
// since they undo the +128 as −128 · Σx), and d kept as the fp16 scale — so the VNNI / AVX2 int8
// kernels run it. The packed view is an ordinary int8 panels view.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/formats/weight_format.h"

namespace ds {

inline constexpr int64_t kQ8_0Block = 32;       // values per block
inline constexpr int64_t kQ8_0BlockBytes = 34;  // fp16 d + 32 int8

const WeightFormat& q8_0_format();
const WeightFormat& q8_0_int8_panels_route();

// out[0 .. 32) = d · q of one block.
void q8_0_dequantize_block(const std::byte* block, float* out);

}  // namespace ds
