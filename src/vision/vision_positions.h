// Where each patch is, and what the tower adds for it: the learned position table resampled to the
// image's grid (bilinear, align_corners=True) and the 2-D rotary angles. Patches are enumerated as
// pixel_values rows are: 2 × 2-merge blocks in raster order, each frame of the grid in turn (HF
// vision_utils.get_vision_position_ids / get_vision_interpolation_indices_and_weights).
#pragma once

#include <cstdint>
#include <vector>

#include "io/tensor_view.h"

namespace ds {

struct VisionGrid {
  int64_t t = 1, h = 0, w = 0;  // image_grid_thw: temporal patches, patch rows, patch columns
  int64_t patches() const { return t * h * w; }
};

struct PatchPosition {
  int64_t row, col;
};

// [grid.patches()] in pixel_values row order.
std::vector<PatchPosition> patch_positions(const VisionGrid& grid, int64_t merge_size);

// out[i, :] = the table (side × side rows of `dim`) sampled at patch i's place, bilinear with
// aligned corners: source row = row · (side − 1) / max(h − 1, 1) (fp32, as HF), taps floor and
// floor + 1 (clamped), weights 1 − distance. out [positions.size(), dim].
void interpolated_position_embeddings(const TensorView& table, int64_t side, const VisionGrid& grid,
                                      const std::vector<PatchPosition>& positions, float* out);

// cos / sin [positions.size(), head_dim / 2] of the 2-D rotary: slot j < head_dim/4 turns with the
// row (angle row · θ^(−4j/head_dim)), slot head_dim/4 + j with the column; Backend::rope rotates
// pairs (i, i + head_dim/2) by slot i.
void vision_rotary_angles(const std::vector<PatchPosition>& positions, int64_t head_dim, double theta, float* cos,
                          float* sin);

}  // namespace ds
