// BlockPool: reference counts, content keys and the free queue as an intrusive list over ids, so
// every operation is O(1) and nothing allocates after construction except the key map.
#include "cache/block_pool.h"

#include "util/check.h"

namespace ds {

BlockPool::BlockPool(int64_t num_blocks)
    : ref_count_(static_cast<size_t>(num_blocks), 0),
      key_(static_cast<size_t>(num_blocks)),
      prev_(static_cast<size_t>(num_blocks), kNone),
      next_(static_cast<size_t>(num_blocks), kNone) {
  by_key_.reserve(static_cast<size_t>(num_blocks));
  for (int64_t b = 0; b < num_blocks; ++b) push_back(static_cast<int32_t>(b));
}

void BlockPool::unlink(int32_t b) {
  const auto i = static_cast<size_t>(b);
  (prev_[i] == kNone ? head_ : next_[static_cast<size_t>(prev_[i])]) = next_[i];
  (next_[i] == kNone ? tail_ : prev_[static_cast<size_t>(next_[i])]) = prev_[i];
  prev_[i] = next_[i] = kNone;
  --free_count_;
}

void BlockPool::push_front(int32_t b) {
  const auto i = static_cast<size_t>(b);
  prev_[i] = kNone;
  next_[i] = head_;
  (head_ == kNone ? tail_ : prev_[static_cast<size_t>(head_)]) = b;
  head_ = b;
  ++free_count_;
}

void BlockPool::push_back(int32_t b) {
  const auto i = static_cast<size_t>(b);
  next_[i] = kNone;
  prev_[i] = tail_;
  (tail_ == kNone ? head_ : next_[static_cast<size_t>(tail_)]) = b;
  tail_ = b;
  ++free_count_;
}

std::optional<int32_t> BlockPool::allocate() {
  if (head_ == kNone) return std::nullopt;
  const int32_t b = head_;
  unlink(b);
  auto& key = key_[static_cast<size_t>(b)];
  if (key) {
    if (listener_) listener_->block_evicted(b, *key);
    by_key_.erase(*key);
    key.reset();
    ++evictions_;
  }
  ref_count_[static_cast<size_t>(b)] = 1;
  return b;
}

std::optional<int32_t> BlockPool::allocate_uncached() {
  if (head_ == kNone || key_[static_cast<size_t>(head_)]) return std::nullopt;  // keyless blocks lead the queue
  return allocate();
}

void BlockPool::acquire(int32_t b) {
  DS_CHECK(b >= 0 && b < num_blocks(), "block ", b, " of ", num_blocks());
  if (ref_count_[static_cast<size_t>(b)]++ == 0) unlink(b);
}

void BlockPool::release(int32_t b) {
  DS_CHECK(b >= 0 && b < num_blocks() && ref_count_[static_cast<size_t>(b)] > 0, "releasing block ", b,
           " that holds no reference");
  if (--ref_count_[static_cast<size_t>(b)] > 0) return;
  if (key_[static_cast<size_t>(b)]) push_back(b);
  else push_front(b);
}

std::optional<int32_t> BlockPool::find(uint64_t key) const {
  const auto it = by_key_.find(key);
  if (it == by_key_.end()) return std::nullopt;
  return it->second;
}

bool BlockPool::set_key(int32_t b, uint64_t key) {
  DS_CHECK(b >= 0 && b < num_blocks() && ref_count_[static_cast<size_t>(b)] > 0, "keying unreferenced block ", b);
  if (key_[static_cast<size_t>(b)] || by_key_.count(key) != 0) return false;
  key_[static_cast<size_t>(b)] = key;
  by_key_.emplace(key, b);
  if (listener_) listener_->block_keyed(b, key);
  return true;
}

std::vector<std::pair<int32_t, uint64_t>> BlockPool::cached_blocks_by_age() const {
  std::vector<std::pair<int32_t, uint64_t>> out;
  out.reserve(by_key_.size());
  for (int32_t b = head_; b != kNone; b = next_[static_cast<size_t>(b)])
    if (const auto& key = key_[static_cast<size_t>(b)]) out.emplace_back(b, *key);
  for (int32_t b = 0; b < num_blocks(); ++b)
    if (ref_count_[static_cast<size_t>(b)] > 0 && key_[static_cast<size_t>(b)]) out.emplace_back(b, *key_[static_cast<size_t>(b)]);
  return out;
}

}  // namespace ds
