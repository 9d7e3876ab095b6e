// SnapshotPool: a bounded set of copies of a sequence's DeltaNet state (conv history + recurrent
// state of every linear-attention layer) at a prefix of its tokens, found by the prefix's key and
// verified against its tokens. Full: the least recently used snapshot makes room.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

namespace ds {

class SnapshotPool {
 public:
  // Room for `capacity` snapshots of `floats_per_snapshot` floats each (0: the pool is off).
  SnapshotPool(int64_t capacity, int64_t floats_per_snapshot);

  int64_t capacity() const { return capacity_; }
  int64_t size() const { return static_cast<int64_t>(by_key_.size()); }
  int64_t evictions() const { return evictions_; }
  uint64_t snapshot_bytes() const { return static_cast<uint64_t>(floats_) * sizeof(float); }
  uint64_t bytes_used() const { return static_cast<uint64_t>(size()) * snapshot_bytes(); }

  // The snapshot of exactly `prefix`, if one is kept (its key found and its tokens equal).
  std::optional<int32_t> find(uint64_t key, std::span<const int32_t> prefix) const;
  // Storage to fill for a new snapshot of `prefix`; nullptr when the pool is off or already holds
  // that prefix (then it counts as used now).
  float* insert(uint64_t key, std::span<const int32_t> prefix);
  // The state of a found snapshot; marks it used now.
  const float* use(int32_t entry);

  // Persistence (PrefixStore): `observer(entry)` runs when insert() evicts a snapshot, before it
  // is overwritten; every snapshot held, least recently used first; an entry's key, prefix, state.
  void set_eviction_observer(std::function<void(int32_t)> observer) { on_evict_ = std::move(observer); }
  std::vector<int32_t> entries_by_age() const;
  uint64_t key(int32_t entry) const { return entries_[static_cast<size_t>(entry)].key; }
  std::span<const int32_t> prefix(int32_t entry) const { return entries_[static_cast<size_t>(entry)].prefix; }
  const float* state(int32_t entry) const { return states_.get() + static_cast<int64_t>(entry) * floats_; }

 private:
  struct Entry {
    uint64_t key = 0;
    uint64_t last_used = 0;  // 0: empty
    std::vector<int32_t> prefix;
  };

  int64_t capacity_, floats_;
  std::unique_ptr<float[]> states_;  // [capacity, floats_per_snapshot], resident as snapshots are taken
  std::vector<Entry> entries_;        // [capacity]
  std::unordered_map<uint64_t, int32_t> by_key_;
  uint64_t clock_ = 0;
  int64_t evictions_ = 0;
  std::function<void(int32_t)> on_evict_;
};

}  // namespace ds
