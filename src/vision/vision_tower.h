// The Qwen3.5 vision tower and its 2 × 2 merger (HF Qwen3_5VisionModel), written once against the
// op interface: patch embedding, interpolated learned positions, depth × pre-norm blocks
// (LayerNorm, bidirectional attention within each image with the 2-D rotary, GELU-tanh MLP), then
// LayerNorm over each patch and the merger MLP (GELU-erf) over each 2 × 2 block.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "io/model_config.h"
#include "kernels/backend.h"
#include "util/status.h"
#include "vision/vision_positions.h"
#include "vision/vision_weights.h"

namespace ds {

struct VisionOutput {
  std::vector<float> hidden;  // [N, hidden_size]: last_hidden_state, the blocks' output
  std::vector<float> merged;  // [N / m², out_hidden_size]: pooler_output, one row per image token
};

class VisionTower {
 public:
  // `weights` must outlive the tower (views into the checkpoint).
  VisionTower(const VisionConfig& config, const VisionWeights& weights) : config_(config), weights_(weights) {}

  // pixel_values [N, C·T·P·P] are the rows of the images in order (image_preprocessor.h), `grids`
  // one per image; each image (each frame group) attends only to itself. With round_input_bf16
  // every matmul input is rounded to bf16 (fast mode) and attention takes its bf16 form
  // (Backend::attention_bidirectional); otherwise all fp32. Refuses grids whose
  // sides are not multiples of the merge size or whose patches do not add up to the rows.
  Result<VisionOutput> forward(Backend& backend, std::span<const float> pixel_values, std::span<const VisionGrid> grids,
                               bool round_input_bf16 = false) const;

  int64_t tokens(const VisionGrid& grid) const {
    return grid.patches() / (config_.spatial_merge_size * config_.spatial_merge_size);
  }

 private:
  void block(Backend& backend, const VisionBlockWeights& w, std::span<const VisionGrid> grids, const RopeAngles& angles,
             std::vector<float>& x, bool round_input_bf16) const;

  const VisionConfig& config_;
  const VisionWeights& weights_;
};

}  // namespace ds
