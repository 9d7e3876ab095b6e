// DeltaNetStateCache: the manager of the Gated DeltaNet layers' state — a slot per running
// sequence (with speculative decoding also a spare, which a verify writes its state into), and
// snapshots of slots at 64-token chunk boundaries of prompts, from which a later sequence with the
// same prefix starts instead of computing it again.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "cache/deltanet_state_slots.h"
#include "cache/snapshot_pool.h"

namespace ds {

class DeltaNetStateCache {
 public:
  // Slot ids [0, num_slots) are sequences' slots, [num_slots, num_slots + num_spares) spares.
  DeltaNetStateCache(int64_t num_slots, int64_t num_spares, int64_t num_snapshots, int64_t num_layers,
                     int64_t conv_channels, int64_t conv_history, int64_t num_v_heads, int64_t k_dim, int64_t v_dim);

  DeltaNetStateSlots& storage() { return slots_; }
  const DeltaNetStateSlots& storage() const { return slots_; }
  const SnapshotPool& snapshots() const { return snapshots_; }
  SnapshotPool& snapshots() { return snapshots_; }
  int64_t free_slots() const { return static_cast<int64_t>(free_.size()); }

  // A slot holding the empty state, or a copy of `snapshot` (≥ 0); nullopt when none is free.
  std::optional<int32_t> allocate(int32_t snapshot, Backend& backend);
  // A spare slot (its contents whatever was left there); nullopt when none is free.
  std::optional<int32_t> allocate_spare();
  void release(int32_t slot);  // a slot or a spare

  std::optional<int32_t> find_snapshot(uint64_t key, std::span<const int32_t> prefix) const {
    return snapshots_.find(key, prefix);
  }
  // Copies a slot into a snapshot of `prefix` (kept unless one exists); returns the new snapshot's
  // storage (its tail still to fill) or an empty one.
  SnapshotPool::Storage take_snapshot(int32_t slot, uint64_t key, std::span<const int32_t> prefix, bool exact,
                                      uint64_t tail_bytes, Backend& backend);

 private:
  DeltaNetStateSlots slots_;
  SnapshotPool snapshots_;
  int64_t num_slots_;
  std::vector<int32_t> free_;         // free slot ids, popped from the back
  std::vector<int32_t> free_spares_;  // free spare ids, the same
};

}  // namespace ds
