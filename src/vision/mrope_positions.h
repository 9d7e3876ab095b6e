// The text model's mRoPE positions (T, H, W) for a prompt holding images, as HF's
// Qwen3_5Model.get_rope_index computes them: text tokens count up on all three rows; a run of
// image-pad tokens is laid out on its merged grid — token (τ, r, c) at (p + τ, p + r, p + c) —
// and advances p by max(h, w) / merge. Decode continues at cache length + rope_delta.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "util/status.h"
#include "vision/vision_positions.h"

namespace ds {

struct MropePositions {
  std::vector<int32_t> positions;  // [S, 3]: (T, H, W) per token, as SequenceInput::positions takes them
  int64_t rope_delta = 0;          // max position + 1 − S: a token at cache length L decodes at L + rope_delta
};

// `ids` is a whole prompt; each maximal run of `image_token_id` is one image, taking the next of
// `grids` (in order). Refuses a run whose length is not its grid's token count (t·h·w / merge²)
// and a count of runs other than grids.size(), naming the image.
Result<MropePositions> mrope_positions(std::span<const int32_t> ids, int32_t image_token_id,
                                       std::span<const VisionGrid> grids, int64_t merge_size);

}  // namespace ds
