// SnapshotPool: a bounded set of copies of a sequence's DeltaNet state (conv history + recurrent
// state of every linear-attention layer) at a prefix of its tokens, found by the prefix's key and
// verified against its tokens. Full: the least recently used snapshot makes room, but not one where
// held snapshots branch — a prefix that two or more diverging ones extend (a system prompt and the
// tools that several conversations share) — while another can go: such a prefix serves every
// branch and outlives the histories built on it, where LRU alone evicts it among them when more
// chats run than the pool holds. The earlier snapshots of one long prompt (a chain, no branch) age
// out as under LRU. A snapshot that ends inside a KV block also keeps that block's filled part (its
// tail), which no cached block holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "cache/prefix_cache_listener.h"
#include "util/anonymous_memory.h"

namespace ds {

class SnapshotPool {
 public:
  // Room for `capacity` snapshots of `floats_per_snapshot` floats each (0: the pool is off).
  SnapshotPool(int64_t capacity, int64_t floats_per_snapshot);

  int64_t capacity() const { return capacity_; }
  int64_t size() const { return static_cast<int64_t>(by_key_.size()); }
  int64_t evictions() const { return evictions_; }
  int64_t decoded() const { return decoded_; }  // snapshots that are not exact
  uint64_t snapshot_bytes() const { return static_cast<uint64_t>(floats_) * sizeof(float); }
  // States held plus the KV tails of the snapshots that have one.
  uint64_t bytes_used() const { return static_cast<uint64_t>(size()) * snapshot_bytes() + tail_bytes_; }

  // The snapshot of exactly `prefix`, if one is kept (its key found and its tokens equal).
  std::optional<int32_t> find(uint64_t key, std::span<const int32_t> prefix) const;
  // Storage to fill for a new snapshot of `prefix` (`tail_bytes` of KV tail); state is nullptr when
  // the pool is off or already holds that key (then it counts as used now). `exact`: the state came
  // from chunked prefills only (prefix_key.h, KeyFamily).
  struct Storage {
    float* state = nullptr;
    std::span<std::byte> tail;
  };
  Storage insert(uint64_t key, std::span<const int32_t> prefix, bool exact, uint64_t tail_bytes = 0);
  // The state of a found snapshot; marks it used now.
  const float* use(int32_t entry);
  std::span<const std::byte> tail(int32_t entry) const { return entries_[static_cast<size_t>(entry)].tail; }
  bool exact(int32_t entry) const { return entries_[static_cast<size_t>(entry)].exact; }

  // Told when insert() stores a new snapshot and when it evicts one (before the entry is
  // overwritten); null: nobody.
  void set_listener(PrefixCacheListener* listener) { listener_ = listener; }
  // Persistence (PrefixStore): every snapshot held, least recently used first; an entry's key,
  // prefix, state.
  std::vector<int32_t> entries_by_age() const;
  uint64_t key(int32_t entry) const { return entries_[static_cast<size_t>(entry)].key; }
  // Whether `entry` still holds the snapshot of `key` (not evicted since).
  bool holds(int32_t entry, uint64_t key) const {
    const Entry& e = entries_[static_cast<size_t>(entry)];
    return e.last_used != 0 && e.key == key;
  }
  std::span<const int32_t> prefix(int32_t entry) const { return entries_[static_cast<size_t>(entry)].prefix; }
  const float* state(int32_t entry) const { return states_.get() + static_cast<int64_t>(entry) * floats_; }

 private:
  struct Entry {
    uint64_t key = 0;
    uint64_t last_used = 0;  // 0: empty
    bool exact = true;
    std::vector<int32_t> prefix;
    std::vector<std::byte> tail;  // [KvBlockPool::block_bytes()] or empty (the prefix ends on a block)
  };

  int64_t capacity_, floats_;
  AnonymousArray<float> states_;  // [capacity, floats_per_snapshot], resident as snapshots are taken
  std::vector<Entry> entries_;        // [capacity]
  // The entry insert() overwrites: an empty one, else the least recently used that is no branch point.
  Entry& entry_to_overwrite();
  // Whether held snapshots that extend entry's prefix diverge from each other (not one chain).
  bool branch_point(const Entry& entry) const;

  std::unordered_map<uint64_t, int32_t> by_key_;
  uint64_t clock_ = 0;
  int64_t evictions_ = 0;
  int64_t decoded_ = 0;
  uint64_t tail_bytes_ = 0;  // Σ tail.size() over the entries
  PrefixCacheListener* listener_ = nullptr;
};

}  // namespace ds
