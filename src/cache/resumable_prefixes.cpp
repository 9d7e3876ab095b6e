// ResumablePrefixes: each held snapshot counts the blocks before it that are not cached in a
// family it can use; at zero it is resumable and covers its blocks. A block is announced while at
// least one resumable snapshot covers it. Every change costs a hash lookup per snapshot that
// depends on the block (a shared system prompt's blocks: every snapshot built on it).
#include "cache/resumable_prefixes.h"

#include "cache/hybrid_cache.h"
#include "cache/prefix_key.h"
#include "util/check.h"

namespace ds {

ResumablePrefixes::ResumablePrefixes(const SnapshotPool& snapshots, uint64_t salt, int64_t block_size,
                                     ResumablePrefixObserver& observer)
    : snapshots_(snapshots), salt_(salt), block_size_(block_size), observer_(observer) {}

bool ResumablePrefixes::usable(const Snapshot& s, size_t b) const {
  return cached_.count(s.keys[b]) != 0 || (!s.exact && cached_.count(family_key(s.keys[b], KeyFamily::decoded)) != 0);
}

void ResumablePrefixes::block_keyed(int32_t, uint64_t key) { block_changed(key, true); }
void ResumablePrefixes::block_evicted(int32_t, uint64_t key) { block_changed(key, false); }

void ResumablePrefixes::block_changed(uint64_t key, bool cached) {
  const auto waiting = needs_.find(key);
  if (waiting == needs_.end()) {
    if (cached) cached_.insert(key);
    else cached_.erase(key);
    return;
  }
  const std::vector<std::pair<int32_t, size_t>>& refs = waiting->second;
  std::vector<char> before(refs.size());
  for (size_t i = 0; i < refs.size(); ++i) before[i] = usable(held_.at(refs[i].first), refs[i].second);
  if (cached) cached_.insert(key);
  else cached_.erase(key);
  for (size_t i = 0; i < refs.size(); ++i) {
    Snapshot& s = held_.at(refs[i].first);
    const bool now = usable(s, refs[i].second);
    if (now == static_cast<bool>(before[i])) continue;
    if (now) {
      if (--s.missing == 0) cover(s);
    } else if (s.missing++ == 0) {
      uncover(s);
    }
  }
}

void ResumablePrefixes::snapshot_stored(int32_t entry) {
  Snapshot s;
  s.entry = entry;
  const auto prefix = snapshots_.prefix(entry);
  s.exact = snapshots_.exact(entry);
  const std::vector<uint64_t> keys = prefix_keys(prefix, salt_);  // [p + 1]
  const auto blocks = static_cast<size_t>(static_cast<int64_t>(prefix.size()) / block_size_);
  s.keys.resize(blocks);
  for (size_t b = 0; b < blocks; ++b) {
    s.keys[b] = keys[(b + 1) * static_cast<size_t>(block_size_)];
    needs_[s.keys[b]].emplace_back(entry, b);
    if (!s.exact) needs_[family_key(s.keys[b], KeyFamily::decoded)].emplace_back(entry, b);
    if (!usable(s, b)) ++s.missing;
  }
  const auto [it, inserted] = held_.emplace(entry, std::move(s));
  DS_CHECK(inserted, "snapshot entry ", entry, " stored twice without an eviction");
  if (it->second.missing == 0) cover(it->second);
}

void ResumablePrefixes::snapshot_evicted(int32_t entry) {
  const auto it = held_.find(entry);
  if (it == held_.end()) return;
  const Snapshot& s = it->second;
  if (s.missing == 0) uncover(s);
  auto forget = [&](uint64_t key) {
    auto refs = needs_.find(key);
    if (refs == needs_.end()) return;
    std::erase_if(refs->second, [&](const auto& ref) { return ref.first == entry; });
    if (refs->second.empty()) needs_.erase(refs);
  };
  for (uint64_t key : s.keys) {
    forget(key);
    if (!s.exact) forget(family_key(key, KeyFamily::decoded));
  }
  held_.erase(it);
}

void ResumablePrefixes::cover(const Snapshot& s) {
  // Blocks covered for the first time; other snapshots share a leading part, so these are
  // normally one run at the end, but each run is told with its own parent.
  for (size_t b = 0; b < s.keys.size();) {
    if (covered_[s.keys[b]]++ != 0) {
      ++b;
      continue;
    }
    const size_t first = b;
    while (++b < s.keys.size() && covered_.count(s.keys[b]) == 0) covered_[s.keys[b]] = 1;
    const auto B = static_cast<size_t>(block_size_);
    observer_.blocks_resumable(first == 0 ? std::nullopt : std::optional<uint64_t>(s.keys[first - 1]),
                               std::span<const uint64_t>(s.keys).subspan(first, b - first),
                               snapshots_.prefix(s.entry).subspan(first * B, (b - first) * B));
  }
}

void ResumablePrefixes::uncover(const Snapshot& s) {
  std::vector<uint64_t> gone;
  for (uint64_t key : s.keys) {
    auto it = covered_.find(key);
    DS_CHECK(it != covered_.end(), "uncovering a block no snapshot covers");
    if (--it->second == 0) {
      covered_.erase(it);
      gone.push_back(key);
    }
  }
  if (!gone.empty()) observer_.blocks_not_resumable(gone);
}

void announce_resumable_prefixes(HybridCache& cache, ResumablePrefixObserver& observer) {
  cache.add_listener(std::make_unique<ResumablePrefixes>(cache.snapshots(), cache.geometry().identity(),
                                                         cache.geometry().block_size, observer));
}

}  // namespace ds
