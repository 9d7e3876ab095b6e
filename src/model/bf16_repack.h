// Bf16 panels (the default for bf16 checkpoints in fast mode on a backend that runs them): every bf16
// matmul weight of the text model (projections and head) is copied at load time into the panel
// layout of kernels/formats/bf16_panels/, in a WeightArena (2 MiB pages); the mapped source pages are then
// released, so the resident set holds one copy. Values are unchanged (a pure permutation): the
// win is speed — one sequential stream per thread and no TLB misses for decode, an outer-product
// kernel with no horizontal sums for prefill (docs/benchmarks.md has the measurements).
#pragma once

#include <cstdint>
#include <memory>

#include "kernels/backend.h"
#include "model/qwen35_weights.h"
#include "model/weight_arena.h"

namespace ds {

// Replaces each matmul view in `weights` that `backend` runs faster in another value-preserving
// format (Backend::preferred_format: bf16 panels for bf16 weights in fast mode on AVX-512 BF16 or
// AVX2, FP8 panels for block-FP8 weights in fast mode on AVX2 and up) by
// a packed view into the returned arena (null when none), and each weight in a GGUF block type by
// its kernels' panels made from its blocks losslessly (kernel_format_of_blocks: Q8_0 → int8 panels,
// activation widths as quantize.h; Q4_K / Q5_K / Q6_K / IQ4_XS → their panels), giving back each
// source as `release` says.
std::unique_ptr<WeightArena> repack_weights_bf16(Qwen35Weights& weights, const Backend& backend, bool round_input_bf16,
                                                 int threads, SourceRelease& release);

}  // namespace ds
