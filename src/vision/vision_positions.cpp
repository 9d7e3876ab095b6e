// Patch positions, the interpolated position table and the rotary angles, in HF's fp32 arithmetic.
#include "vision/vision_positions.h"

#include <algorithm>
#include <cmath>

#include "kernels/weight_access.h"

namespace ds {
namespace {

struct AxisTaps {
  int64_t first, second;  // table rows (or columns) of the two taps
  float w_first, w_second;
};

// HF _interpolation_axis_taps_weights, bilinear, align_corners=True, in fp32.
AxisTaps axis_taps(int64_t index, int64_t size, int64_t side) {
  const float src = static_cast<float>(index) * static_cast<float>(side - 1) / static_cast<float>(std::max<int64_t>(size - 1, 1));
  const float floor = std::floor(src);
  const auto clamp = [&](int64_t tap) { return std::clamp<int64_t>(tap, 0, side - 1); };
  // Weights as HF forms them: 1 − |src − floor − offset|, clamped at 0.
  return {clamp(static_cast<int64_t>(floor)), clamp(static_cast<int64_t>(floor) + 1),
          std::max(0.0f, 1.0f - std::fabs(src - floor - 0.0f)), std::max(0.0f, 1.0f - std::fabs(src - floor - 1.0f))};
}

}  // namespace

std::vector<PatchPosition> patch_positions(const VisionGrid& grid, int64_t merge_size) {
  std::vector<PatchPosition> out;
  out.reserve(static_cast<size_t>(grid.patches()));
  const int64_t m = merge_size, blocks_w = grid.w / m;
  for (int64_t t = 0; t < grid.t; ++t)
    for (int64_t k = 0; k < grid.h * grid.w; ++k) {
      const int64_t ic = k % m, ir = (k / m) % m, bc = (k / (m * m)) % blocks_w, br = k / (m * m * blocks_w);
      out.push_back({br * m + ir, bc * m + ic});
    }
  return out;
}

void interpolated_position_embeddings(const TensorView& table, int64_t side, const VisionGrid& grid,
                                      const std::vector<PatchPosition>& positions, float* out) {
  const int64_t dim = table.shape[1];
  std::vector<float> rows(static_cast<size_t>(4 * dim));  // [4, dim]: the four tap rows of one patch
  for (size_t i = 0; i < positions.size(); ++i) {
    const AxisTaps r = axis_taps(positions[i].row, grid.h, side), c = axis_taps(positions[i].col, grid.w, side);
    const int64_t index[4] = {r.first * side + c.first, r.first * side + c.second, r.second * side + c.first,
                               r.second * side + c.second};
    const float weight[4] = {r.w_first * c.w_first, r.w_first * c.w_second, r.w_second * c.w_first,
                             r.w_second * c.w_second};
    for (int tap = 0; tap < 4; ++tap) weight_span(table, index[tap] * dim, dim, rows.data() + tap * dim);
    float* o = out + static_cast<int64_t>(i) * dim;
    for (int64_t d = 0; d < dim; ++d) {
      float sum = 0.0f;
      for (int tap = 0; tap < 4; ++tap) sum += rows[static_cast<size_t>(tap * dim + d)] * weight[tap];
      o[d] = sum;
    }
  }
}

void vision_rotary_angles(const std::vector<PatchPosition>& positions, int64_t head_dim, double theta, float* cos,
                          float* sin) {
  const int64_t spatial = head_dim / 2, quarter = head_dim / 4;
  std::vector<float> inv_freq(static_cast<size_t>(quarter));  // [head_dim / 4]: HF's inv_freq in fp32
  for (int64_t j = 0; j < quarter; ++j)
    inv_freq[static_cast<size_t>(j)] =
        1.0f / std::pow(static_cast<float>(theta), static_cast<float>(2 * j) / static_cast<float>(spatial));
  for (size_t i = 0; i < positions.size(); ++i)
    for (int64_t j = 0; j < quarter; ++j) {
      const float by_row = static_cast<float>(positions[i].row) * inv_freq[static_cast<size_t>(j)];
      const float by_col = static_cast<float>(positions[i].col) * inv_freq[static_cast<size_t>(j)];
      float* c = cos + static_cast<int64_t>(i) * spatial;
      float* s = sin + static_cast<int64_t>(i) * spatial;
      c[j] = std::cos(by_row), s[j] = std::sin(by_row);
      c[quarter + j] = std::cos(by_col), s[quarter + j] = std::sin(by_col);
    }
}

}  // namespace ds
