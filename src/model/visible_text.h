// Random checkpoints that write visible text: the model gives weight only to the token ids its
// tokenizer produces (the BPE vocabulary; not the unused ids of a vocabulary padded to the real
// size, nor special tokens), so a random reply decodes to random but visible text.
//
// How, with plain weights and no bias: residual dimension 0 is a constant feature. Every
// embedding row has +1 there (an unproducible id −1, so a tied head scores it down), no layer
// reads it (its input norms' zero-centred weight −1: scale 0) or writes it (row 0 of o_proj,
// out_proj and down_proj is zero), and the final norm scales it by kFinalScale, so each logit
// gets ±kFinalScale · x0 / rms(x) — the same for every producible id (softmax ignores it) and
// 2 · kFinalScale / rms(x) nats lower for the others (not measured per shape; sampled ids are
// checked to stay in the vocabulary by tests/cli/cli_test.sh). An untied head gets the same ±1 column.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "io/dtype.h"
#include "util/function_ref.h"

namespace ds {

inline constexpr float kFinalScale = 1000.0f;

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
