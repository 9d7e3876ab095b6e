// DeltaNetStateSlots: the storage of per-sequence Gated DeltaNet state of every linear-attention
// layer — the last K-1 conv inputs and the fp32 recurrent state — in fixed slots (O(1) in context
// length). Which slot belongs to whom is DeltaNetStateCache's business; the model only reads slots.
// A slot names its storage through a table, so two slots can trade storage (swap) in O(1): a
// speculative verify writes its state into a spare slot and, when every row stands, the spare's
// storage becomes the sequence's — no copy of the state either way (docs/mtp.md).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/backend.h"
#include "util/anonymous_memory.h"

namespace ds {

class DeltaNetStateSlots {
 public:
  DeltaNetStateSlots(int64_t num_slots, int64_t num_layers, int64_t conv_channels, int64_t conv_history,
                     int64_t num_v_heads, int64_t k_dim, int64_t v_dim);

  int64_t num_slots() const { return num_slots_; }
  float* conv(int32_t slot, int64_t layer);       // [conv_history, conv_channels]
  float* recurrent(int32_t slot, int64_t layer);  // [num_v_heads, k_dim, v_dim]
  void reset(int32_t slot);                       // zeroes every layer's state: an empty sequence
  void swap(int32_t a, int32_t b);                // slot a now names b's storage and b a's
  // One slot's whole state as a flat copy: [num_layers, conv_history, conv_channels] then
  // [num_layers, num_v_heads, k_dim, v_dim].
  int64_t floats_per_slot() const { return num_layers_ * (conv_size_ + recurrent_size_); }
  void save(int32_t slot, float* out, Backend& backend);
  void restore(int32_t slot, const float* in, Backend& backend);
  uint64_t bytes() const { return static_cast<uint64_t>(num_slots_ * floats_per_slot()) * sizeof(float); }

 private:
  float* conv_storage(int32_t slot) const;
  float* recurrent_storage(int32_t slot) const;

  int64_t num_slots_, num_layers_, conv_size_, recurrent_size_;
  // Uninitialised until a slot is handed out (reset or restore writes it): unused slots stay unresident.
  AnonymousArray<float> conv_;       // [num_slots, num_layers, conv_history, conv_channels]
  AnonymousArray<float> recurrent_;  // [num_slots, num_layers, num_v_heads, k_dim, v_dim]
  std::vector<int32_t> storage_;     // [num_slots]: the storage each slot names (at first its own)
};

}  // namespace ds
