// DeltaNetStateCache: a free list of slots; snapshots are whole-slot copies.
#include "cache/deltanet_state_cache.h"

#include "util/check.h"

namespace ds {

DeltaNetStateCache::DeltaNetStateCache(int64_t num_slots, int64_t num_spares, int64_t num_snapshots,
                                       int64_t num_layers, int64_t conv_channels, int64_t conv_history,
                                       int64_t num_v_heads, int64_t k_dim, int64_t v_dim)
    : slots_(num_slots + num_spares, num_layers, conv_channels, conv_history, num_v_heads, k_dim, v_dim),
      snapshots_(num_snapshots, slots_.floats_per_slot()),
      num_slots_(num_slots) {
  for (int64_t s = num_slots - 1; s >= 0; --s) free_.push_back(static_cast<int32_t>(s));
  for (int64_t s = num_slots + num_spares - 1; s >= num_slots; --s) free_spares_.push_back(static_cast<int32_t>(s));
}

std::optional<int32_t> DeltaNetStateCache::allocate(int32_t snapshot, Backend& backend) {
  if (free_.empty()) return std::nullopt;
  const int32_t slot = free_.back();
  free_.pop_back();
  if (snapshot >= 0) slots_.restore(slot, snapshots_.use(snapshot), backend);
  else slots_.reset(slot);
  return slot;
}

std::optional<int32_t> DeltaNetStateCache::allocate_spare() {
  if (free_spares_.empty()) return std::nullopt;
  const int32_t spare = free_spares_.back();
  free_spares_.pop_back();
  return spare;
}

void DeltaNetStateCache::release(int32_t slot) {
  DS_CHECK(slot >= 0 && slot < slots_.num_slots(), "state slot ", slot);
  (slot < num_slots_ ? free_ : free_spares_).push_back(slot);
}

SnapshotPool::Storage DeltaNetStateCache::take_snapshot(int32_t slot, uint64_t key, std::span<const int32_t> prefix,
                                                       bool exact, uint64_t tail_bytes, Backend& backend) {
  const SnapshotPool::Storage storage = snapshots_.insert(key, prefix, exact, tail_bytes);
  if (storage.state != nullptr) slots_.save(slot, storage.state, backend);
  return storage;
}

}  // namespace ds
