// DeltaNetStateSlots: one allocation at start-up; a slot's layers are contiguous, so a whole state
// is two copies.
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
      conv_(static_cast<uint64_t>(num_slots * num_layers * conv_size_)),
      recurrent_(static_cast<uint64_t>(num_slots * num_layers * recurrent_size_)),
      storage_(static_cast<size_t>(num_slots)) {
  for (int32_t s = 0; s < num_slots; ++s) storage_[static_cast<size_t>(s)] = s;
}

float* DeltaNetStateSlots::conv_storage(int32_t slot) const {
  return conv_.get() + static_cast<int64_t>(storage_[static_cast<size_t>(slot)]) * num_layers_ * conv_size_;
}

float* DeltaNetStateSlots::recurrent_storage(int32_t slot) const {
  return recurrent_.get() + static_cast<int64_t>(storage_[static_cast<size_t>(slot)]) * num_layers_ * recurrent_size_;
}

float* DeltaNetStateSlots::conv(int32_t slot, int64_t layer) {
  DS_CHECK(slot >= 0 && slot < num_slots_ && layer >= 0 && layer < num_layers_, "slot ", slot, " layer ", layer);
  return conv_storage(slot) + layer * conv_size_;
}

float* DeltaNetStateSlots::recurrent(int32_t slot, int64_t layer) {
  DS_CHECK(slot >= 0 && slot < num_slots_ && layer >= 0 && layer < num_layers_, "slot ", slot, " layer ", layer);
  return recurrent_storage(slot) + layer * recurrent_size_;
}

void DeltaNetStateSlots::swap(int32_t a, int32_t b) {
  DS_CHECK(a >= 0 && a < num_slots_ && b >= 0 && b < num_slots_, "swapping state slots ", a, " and ", b, " of ", num_slots_);
  std::swap(storage_[static_cast<size_t>(a)], storage_[static_cast<size_t>(b)]);
}

void DeltaNetStateSlots::reset(int32_t slot) {
  if (num_layers_ == 0) return;
  std::fill_n(conv(slot, 0), num_layers_ * conv_size_, 0.0f);
  std::fill_n(recurrent(slot, 0), num_layers_ * recurrent_size_, 0.0f);
}

void DeltaNetStateSlots::save(int32_t slot, float* out, Backend& backend) {
  if (num_layers_ == 0) return;
  const int64_t conv_floats = num_layers_ * conv_size_;
  backend.copy(out, conv(slot, 0), static_cast<uint64_t>(conv_floats) * sizeof(float));
  backend.copy(out + conv_floats, recurrent(slot, 0), static_cast<uint64_t>(num_layers_ * recurrent_size_) * sizeof(float));
}

void DeltaNetStateSlots::restore(int32_t slot, const float* in, Backend& backend) {
  if (num_layers_ == 0) return;
  const int64_t conv_floats = num_layers_ * conv_size_;
  backend.copy(conv(slot, 0), in, static_cast<uint64_t>(conv_floats) * sizeof(float));
  backend.copy(recurrent(slot, 0), in + conv_floats, static_cast<uint64_t>(num_layers_ * recurrent_size_) * sizeof(float));
}

}  // namespace ds
