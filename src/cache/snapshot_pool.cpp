// SnapshotPool: entries in one array; the victim is found by scans of last-use ticks and prefixes
// — a pool holds tens to hundreds of multi-MiB snapshots, and a prefix comparison stops at the first
// differing token, so the scans are noise beside the copy they precede.
#include "cache/snapshot_pool.h"

#include <algorithm>

namespace ds {

SnapshotPool::SnapshotPool(int64_t capacity, int64_t floats_per_snapshot)
    : capacity_(std::max<int64_t>(0, capacity)),
      floats_(floats_per_snapshot),
      states_(static_cast<uint64_t>(capacity_ * floats_)),
      entries_(static_cast<size_t>(capacity_)) {
  by_key_.reserve(static_cast<size_t>(capacity_));
}

std::optional<int32_t> SnapshotPool::find(uint64_t key, std::span<const int32_t> prefix) const {
  const auto it = by_key_.find(key);
  if (it == by_key_.end()) return std::nullopt;
  const std::vector<int32_t>& kept = entries_[static_cast<size_t>(it->second)].prefix;
  if (!std::equal(kept.begin(), kept.end(), prefix.begin(), prefix.end())) return std::nullopt;
  return it->second;
}

SnapshotPool::Storage SnapshotPool::insert(uint64_t key, std::span<const int32_t> prefix, bool exact,
                                           uint64_t tail_bytes) {
  if (capacity_ == 0) return {};
  if (const auto found = find(key, prefix)) {
    entries_[static_cast<size_t>(*found)].last_used = ++clock_;
    return {};
  }
  Entry& victim = entry_to_overwrite();
  const auto entry = static_cast<int32_t>(&victim - entries_.data());
  if (victim.last_used != 0) {
    if (listener_) listener_->snapshot_evicted(entry);
    by_key_.erase(victim.key);
    ++evictions_;
    if (!victim.exact) --decoded_;
    tail_bytes_ -= victim.tail.size();
    victim.tail.clear();
  }
  // A key held by another prefix (a collision) is rare enough to simply not be indexed twice.
  if (!by_key_.emplace(key, entry).second) {
    victim.last_used = 0;
    victim.prefix.clear();
    victim.tail.clear();
    return {};
  }
  victim.key = key;
  victim.last_used = ++clock_;
  victim.exact = exact;
  if (!exact) ++decoded_;
  victim.prefix.assign(prefix.begin(), prefix.end());
  victim.tail.resize(static_cast<size_t>(tail_bytes));
  tail_bytes_ += tail_bytes;
  if (listener_) listener_->snapshot_stored(entry);
  return {states_.get() + static_cast<int64_t>(entry) * floats_, victim.tail};
}

SnapshotPool::Entry& SnapshotPool::entry_to_overwrite() {
  std::vector<Entry*> by_age;  // [capacity] oldest first
  for (Entry& entry : entries_) {
    if (entry.last_used == 0) return entry;
    by_age.push_back(&entry);
  }
  std::sort(by_age.begin(), by_age.end(), [](const Entry* a, const Entry* b) { return a->last_used < b->last_used; });
  for (Entry* entry : by_age)
    if (!branch_point(*entry)) return *entry;
  return *by_age.front();  // not reached: a longest snapshot branches nowhere
}

bool SnapshotPool::branch_point(const Entry& entry) const {
  auto extends = [](const std::vector<int32_t>& longer, const std::vector<int32_t>& shorter) {
    return longer.size() > shorter.size() && std::equal(shorter.begin(), shorter.end(), longer.begin());
  };
  std::vector<const std::vector<int32_t>*> extensions;  // the prefixes that extend entry's
  for (const Entry& other : entries_)
    if (other.last_used != 0 && extends(other.prefix, entry.prefix)) extensions.push_back(&other.prefix);
  std::sort(extensions.begin(), extensions.end(), [](const auto* a, const auto* b) { return a->size() < b->size(); });
  for (size_t i = 1; i < extensions.size(); ++i)
    if (!extends(*extensions[i], *extensions[i - 1])) return true;  // two that diverge (or equal lengths)
  return false;
}

const float* SnapshotPool::use(int32_t entry) {
  entries_[static_cast<size_t>(entry)].last_used = ++clock_;
  return states_.get() + static_cast<int64_t>(entry) * floats_;
}

std::vector<int32_t> SnapshotPool::entries_by_age() const {
  std::vector<int32_t> out;
  for (const auto& [key, entry] : by_key_) out.push_back(entry);
  std::sort(out.begin(), out.end(), [&](int32_t a, int32_t b) {
    return entries_[static_cast<size_t>(a)].last_used < entries_[static_cast<size_t>(b)].last_used;
  });
  return out;
}

}  // namespace ds
