// Random checkpoints that write visible text: the model gives weight only to the token ids its
// tokenizer produces (the BPE vocabulary; not the unused ids of a vocabulary padded to the real
// size, nor special tokens), so a random reply decodes to random but visible text.
//
// How, with plain weights and no bias: residual dimensions [0, kFeatureDims) are a constant
// feature. Every embedding row has +kFeatureValue there (an unproducible id −kFeatureValue, so a
// tied head scores it down), no layer reads them (their input norms' zero-centred weight −1: scale
// 0) or writes them (those rows of o_proj, out_proj and down_proj are zero), and the final norm
// scales them by kFinalScale, so each logit gets ±kFeatureDims · kFeatureValue² · kFinalScale /
// rms(x) — the same for every producible id (softmax ignores it) and twice that lower for the
// others: 2 · 32 · 0.0064 · 1000 / rms(x) = 410 / rms(x) nats, ~100 on the 2B shape, whose last
// residual has rms(x) ≈ 4 (sampled ids are checked to stay in the vocabulary by
// tests/cli/cli_test.sh). An untied head gets the same ±kFeatureValue columns.
//
// Why a group of 32 small values and not one large one: quantisers scale weights and activations
// per block of 32 (int8 panels, K-quant sub-blocks, GGUF Q8_0) or 256 (llama.cpp's Q8_K
// activations). Each head row's feature group is uniform (exact at any scale) and, at 4 σ of the
// random weights, sets no block's scale far above the rest; the head's input there is
// kFinalScale · kFeatureValue / rms(x) ≈ 20 on the 2B shape. One dimension carrying the same margin
// would be an outlier weight column and an input large enough to round the rest of its activation
// block to zero — errors of the checkpoint, not of the engine or quantiser under test.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "io/dtype.h"
#include "util/function_ref.h"

namespace ds {

inline constexpr int64_t kFeatureDims = 32;    // fewer in a smaller hidden size: min(32, hidden / 4)
inline constexpr float kFeatureValue = 0.08f;  // 4 σ of the random matmul weights (0.02)
inline constexpr float kFinalScale = 1000.0f;

// The feature's dimensions in a hidden size: min(kFeatureDims, hidden / 4), at least 1.
int64_t visible_feature_dims(int64_t hidden);

// produced[id] for ids < vocab: the id is in the tokenizer's model.vocab and is no special added
// token; nullopt when tokenizer.json has no vocabulary (a test checkpoint: then nothing is edited).
std::optional<std::vector<bool>> producible_ids(const std::string& tokenizer_json, int64_t vocab);

// The elements of tensor `name` (shape) that the scheme above sets: set(flat index, value) for each;
// nothing for other tensors. text_prefix: "model.language_model." or "model."; tied: the embedding
// is also the head.
void visible_text_edits(const std::string& name, std::span<const int64_t> shape, const std::string& text_prefix, bool tied,
                        const std::vector<bool>& produced, FunctionRef<void(int64_t, float)> set);

// The same edits written into the tensor's bytes (dtype, as written).
void make_text_visible(const std::string& name, std::span<const int64_t> shape, DType dtype, std::span<std::byte> bytes,
                       const std::string& text_prefix, bool tied, const std::vector<bool>& produced);

}  // namespace ds
