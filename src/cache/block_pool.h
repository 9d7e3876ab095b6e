// BlockPool: the bookkeeping of a pool of fixed-size cache blocks (vLLM v1's BlockPool) — reference
// counts, content keys and an LRU queue of unreferenced blocks. It holds no block data: a manager
// pairs it with the storage of its layer kind.
//
// A block whose content is known (a full block of prompt tokens) carries its key, the prefix hash
// of every token up to its end; sequences with the same tokens share it by reference count. An
// unreferenced block stays cached until it is needed for something else: free blocks without a
// key are handed out first, then cached ones, least recently released first (evicting the key).
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cache/prefix_cache_listener.h"

namespace ds {

class BlockPool {
 public:
  explicit BlockPool(int64_t num_blocks);

  int64_t num_blocks() const { return static_cast<int64_t>(ref_count_.size()); }
  // Unreferenced blocks: never used, or cached and evictable. All count as free capacity.
  int64_t free_blocks() const { return free_count_; }
  int64_t cached_blocks() const { return static_cast<int64_t>(by_key_.size()); }
  int64_t evictions() const { return evictions_; }
  int32_t ref_count(int32_t block) const { return ref_count_[static_cast<size_t>(block)]; }

  // An unreferenced block with reference count 1; nullopt when every block is referenced.
  std::optional<int32_t> allocate();
  // An unreferenced block that caches nothing, with reference count 1; nullopt when none is left.
  std::optional<int32_t> allocate_uncached();
  // One more reference to a block (a cached hit; it leaves the free queue if it was there).
  void acquire(int32_t block);
  // One reference fewer; at zero the block joins the free queue (still cached if it has a key).
  void release(int32_t block);

  // The cached block with this key, if any.
  std::optional<int32_t> find(uint64_t key) const;
  // Gives a referenced block its content key. False (and nothing changes) when another block
  // already holds the key: the duplicate stays private and is reused as soon as it is released.
  bool set_key(int32_t block, uint64_t key);

  // Told when set_key() keys a block and when allocate() evicts a cached block (before its key is
  // dropped, while its storage still holds the content); null: nobody.
  void set_listener(PrefixCacheListener* listener) { listener_ = listener; }
  // Every cached block with its key: unreferenced ones least recently used first, then referenced.
  std::vector<std::pair<int32_t, uint64_t>> cached_blocks_by_age() const;

 private:
  static constexpr int32_t kNone = -1;
  void unlink(int32_t block);
  void push_front(int32_t block);
  void push_back(int32_t block);

  std::vector<int32_t> ref_count_;            // [num_blocks]
  std::vector<std::optional<uint64_t>> key_;  // [num_blocks]
  std::unordered_map<uint64_t, int32_t> by_key_;
  // Free queue, a doubly linked list over block ids: keyless blocks at the front (taken first),
  // cached blocks appended at the back as they are released (front = least recently used).
  std::vector<int32_t> prev_, next_;  // [num_blocks]
  int32_t head_ = kNone, tail_ = kNone;
  int64_t free_count_ = 0;
  int64_t evictions_ = 0;
  PrefixCacheListener* listener_ = nullptr;
};

}  // namespace ds
