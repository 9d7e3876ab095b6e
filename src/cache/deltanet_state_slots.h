// DeltaNetStateSlots: per-sequence Gated DeltaNet state of every linear-attention layer — the
// last K-1 conv inputs and the fp32 recurrent state — in fixed slots (O(1) in context length).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace ds {

class DeltaNetStateSlots {
 public:
  DeltaNetStateSlots(int64_t num_slots, int64_t num_layers, int64_t conv_channels, int64_t conv_history,
                     int64_t num_v_heads, int64_t k_dim, int64_t v_dim);

  std::optional<int32_t> allocate();  // a zeroed slot
  void release(int32_t slot);
  float* conv(int32_t slot, int64_t layer);       // [conv_history, conv_channels]
  float* recurrent(int32_t slot, int64_t layer);  // [num_v_heads, k_dim, v_dim]
  void reset(int32_t slot);
  int64_t free_slots() const { return static_cast<int64_t>(free_.size()); }
  uint64_t bytes() const { return static_cast<uint64_t>(num_slots_ * num_layers_ * (conv_size_ + recurrent_size_)) * sizeof(float); }

 private:
  int64_t num_slots_, num_layers_, conv_size_, recurrent_size_;
  // Uninitialised until a slot is handed out (allocate zeroes it): unused slots stay unresident.
  std::unique_ptr<float[]> conv_;       // [num_slots, num_layers, conv_history, conv_channels]
  std::unique_ptr<float[]> recurrent_;  // [num_slots, num_layers, num_v_heads, k_dim, v_dim]
  std::vector<int32_t> free_;
};

}  // namespace ds
