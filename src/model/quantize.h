// Int8 weights (`--weights int8`): every matmul weight of the text model (projections and head) is
// quantised at load time, symmetric per group of kInt8ScaleGroup (32) inputs of a row (w ≈ scale · q, q in
// [−127, 127], scale = max |w| / 127 over the group), and repacked into the panel layout the int8
// kernels stream (kernels/formats/int8_panels/int8_panels.h: 32 rows interleaved by 4 inputs, each group's scales beside
// its values, as fp16; 1,088 bytes per 32 rows × 32 inputs), in a WeightArena; the source pages of
// the mmapped checkpoint are then released, so the resident set holds the int8 copy only. Embeddings
// stay as stored (one row is read per token). The matmuls quantise their activations too: to int8,
// or to 16 bits for the Gated DeltaNet's in_proj_qkv, in_proj_z and out_proj and the MLP's down_proj (TensorView::
// activation_planes; accuracy figures in docs/numerics.md).
#pragma once

#include <cstdint>
#include <memory>

#include "kernels/backend.h"
#include "model/qwen35_weights.h"
#include "model/weight_arena.h"

namespace ds {

// How many activation planes (TensorView::activation_planes) each matmul weight's int8 kernels use,
// by name: 2 for the weights listed in quantize.cpp, 1 for the rest.
int64_t int8_activation_planes(const Qwen35Weights& weights, const TensorView& w);

// Replaces the matmul views in `weights` by int8 views into the returned arena (advised to take 2 MiB
// pages; the loader logs how much did), giving back each source as `release` says.
// Q8_0 weights of a GGUF file are not requantised: their blocks become int8 panels losslessly
// (kernels/formats/q8_0/).
std::unique_ptr<WeightArena> quantize_weights_int8(Qwen35Weights& weights, int threads, SourceRelease& release);

// 4-bit weights (`--weights q4_k`): every matmul weight stored in a float format is quantised at load
// to Q4_K (kernels/formats/q4_k/: 4.5 bits per weight, scales and minimums per 32 inputs), the head
// to Q6_K (6.56 bits: its errors reach every logit directly, as llama.cpp's Q4_K_M keeps it), and
// the DeltaNet's in_proj_a / in_proj_b stay as stored (they set the decay and the write strength of
// the recurrent state every token; every producer keeps them 16-bit, ../shared/docs/
// quantized-checkpoints.md §2.4), repacked as `backend` prefers. Weights already in a GGUF block type
// keep it. The kernels quantise activations to int8 per 32 inputs (kquant_activations.h). An error if
// a weight to quantise has rows that are not a multiple of 256 values (every real Qwen3.5 shape is).
Result<std::unique_ptr<WeightArena>> quantize_weights_q4_k(Qwen35Weights& weights, const Backend& backend,
                                                           bool round_input_bf16, int threads, SourceRelease& release);

}  // namespace ds
