// RopeTable: inv_freq in fp32 like HF (base ** (2j / dim) in fp32, then reciprocal); angles are
// one fp32 product position × inv_freq, as HF's fp32 matmul of a rank-1 outer product.
#include "model/rope_angles.h"

#include <cmath>

namespace ds {

RopeTable::RopeTable(const TextConfig& config) {
  const int64_t dim = config.rotary_dim();
  const int64_t half = dim / 2;
  for (int64_t j = 0; j < half; ++j) {
    const float exponent = static_cast<float>(2 * j) / static_cast<float>(dim);
    inv_freq_.push_back(1.0f / std::pow(static_cast<float>(config.rope.rope_theta), exponent));
  }
  row_of_slot_.assign(static_cast<size_t>(half), 0);
  const auto& section = config.rope.mrope_section;
  if (!section.empty()) {
    for (int64_t j = 1; j < half && j < 3 * section[1]; j += 3) row_of_slot_[j] = 1;
    for (int64_t j = 2; j < half && j < 3 * section[2]; j += 3) row_of_slot_[j] = 2;
  }
}

void RopeTable::angles(const int32_t* positions, int64_t n, float* cos, float* sin) const {
  const int64_t half = half_dim();
  for (int64_t t = 0; t < n; ++t)
    for (int64_t j = 0; j < half; ++j) {
      const float angle = static_cast<float>(positions[t * 3 + row_of_slot_[j]]) * inv_freq_[j];
      cos[t * half + j] = std::cos(angle);
      sin[t * half + j] = std::sin(angle);
    }
}

}  // namespace ds
