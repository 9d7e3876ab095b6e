// The tower's matmul weights prepared once at load, as the text model's are (model/bf16_repack.h):
// each one the backend runs faster in another value-preserving format (bf16 panels for BF16 weights
// on AVX-512 BF16 in fast mode) is copied into that format in one WeightArena, and its view replaced,
// so patch embedding, qkv, proj, fc1, fc2 and the merger's fc1 / fc2 run the packed multi-threaded
// kernels. Values are unchanged (a permutation); f32 mode packs nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/backend.h"
#include "model/weight_arena.h"
#include "vision/vision_weights.h"

namespace ds {

// The views of every matmul weight of the tower and merger (biases, norms and the position table are not).
std::vector<TensorView*> vision_matmul_weights(VisionWeights& weights);

// Replaces each matmul view of `weights` that `backend` prefers in another format by a packed view
// into the returned arena (null when none moves), giving back each source as `release` says. The
// arena must outlive every use of `weights`.
std::unique_ptr<WeightArena> pack_vision_weights(VisionWeights& weights, const Backend& backend, bool round_input_bf16,
                                                 int threads, SourceRelease& release);

}  // namespace ds
