// Rotary angles of Qwen3.5's text rotary embedding (HF Qwen3_5TextRotaryEmbedding): partial
// rotary (rotary_dim = head_dim × partial_rotary_factor), θ = rope_theta, and interleaved mRoPE:
// frequency slot j takes its position from row T, H (j ≡ 1 mod 3, j < 3·sec[1]) or W (j ≡ 2 mod 3,
// j < 3·sec[2]). Spec §3.4.
#pragma once

#include <cstdint>
#include <vector>

#include "io/model_config.h"

namespace ds {

class RopeTable {
 public:
  explicit RopeTable(const TextConfig& config);
  int64_t half_dim() const { return static_cast<int64_t>(inv_freq_.size()); }
  // cos/sin [n, half_dim] for positions [n, 3] (T, H, W rows per token).
  void angles(const int32_t* positions, int64_t n, float* cos, float* sin) const;

 private:
  std::vector<float> inv_freq_;  // [half_dim], fp32 as HF computes it
  std::vector<int> row_of_slot_; // [half_dim]: 0 = T, 1 = H, 2 = W
};

}  // namespace ds
