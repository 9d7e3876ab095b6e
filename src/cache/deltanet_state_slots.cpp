// DeltaNetStateSlots: one allocation at start-up; slots are zeroed when handed out.
#include "cache/deltanet_state_slots.h"

#include <algorithm>

#include "util/check.h"

namespace ds {

DeltaNetStateSlots::DeltaNetStateSlots(int64_t num_slots, int64_t num_layers, int64_t conv_channels,
                                       int64_t conv_history, int64_t num_v_heads, int64_t k_dim, int64_t v_dim)
    : num_slots_(num_slots),
      num_layers_(num_layers),
      conv_size_(conv_history * conv_channels),
      recurrent_size_(num_v_heads * k_dim * v_dim),
      conv_(new float[static_cast<size_t>(num_slots * num_layers * conv_size_)]),
      recurrent_(new float[static_cast<size_t>(num_slots * num_layers * recurrent_size_)]) {
  for (int64_t s = num_slots - 1; s >= 0; --s) free_.push_back(static_cast<int32_t>(s));
}

std::optional<int32_t> DeltaNetStateSlots::allocate() {
  if (free_.empty()) return std::nullopt;
  const int32_t slot = free_.back();
  free_.pop_back();
  reset(slot);
  return slot;
}

void DeltaNetStateSlots::release(int32_t slot) {
  DS_CHECK(slot >= 0 && slot < num_slots_, "state slot ", slot);
  free_.push_back(slot);
}

float* DeltaNetStateSlots::conv(int32_t slot, int64_t layer) {
  DS_CHECK(slot >= 0 && slot < num_slots_ && layer >= 0 && layer < num_layers_, "slot ", slot, " layer ", layer);
  return conv_.get() + (slot * num_layers_ + layer) * conv_size_;
}

float* DeltaNetStateSlots::recurrent(int32_t slot, int64_t layer) {
  DS_CHECK(slot >= 0 && slot < num_slots_ && layer >= 0 && layer < num_layers_, "slot ", slot, " layer ", layer);
  return recurrent_.get() + (slot * num_layers_ + layer) * recurrent_size_;
}

void DeltaNetStateSlots::reset(int32_t slot) {
  std::fill_n(conv(slot, 0), num_layers_ * conv_size_, 0.0f);
  std::fill_n(recurrent(slot, 0), num_layers_ * recurrent_size_, 0.0f);
}

}  // namespace ds
