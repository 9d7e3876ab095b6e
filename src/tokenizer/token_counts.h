// TokenCounts: how often each token id occurs in a text corpus — the data behind a draft head's token
// map (the N ids a restricted MTP head drafts among, most frequent first; io/token_map_file.h,
// docs/mtp.md), and how much of a text a given draft vocabulary covers.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "util/function_ref.h"

namespace ds {

class TokenCounts {
 public:
  explicit TokenCounts(int32_t id_limit) : counts_(static_cast<size_t>(id_limit), 0) {}

  // Counts each id (every id must lie in [0, id_limit)).
  void add(std::span<const int32_t> ids);

  int32_t id_limit() const { return static_cast<int32_t>(counts_.size()); }
  uint64_t total() const { return total_; }
  uint64_t count(int32_t id) const { return counts_[static_cast<size_t>(id)]; }
  int64_t distinct() const;  // ids seen at least once

  // Every id `keep` admits, most frequent first; equal counts (the unseen ids among them) in id order,
  // which for a byte-level BPE vocabulary is its merge rank, the order `--draft-vocab` alone drafts in.
  std::vector<int32_t> ordering(FunctionRef<bool(int32_t)> keep) const;

  // Share of the counted tokens whose id is among the first n of `ordering`, in [0, 1] (0 with none counted).
  double coverage(std::span<const int32_t> ordering, int64_t n) const;
  // The same for the ids [0, n): the draft vocabulary of `--draft-vocab n` without a token map.
  double coverage_below(int64_t n) const;

 private:
  std::vector<uint64_t> counts_;  // [id_limit]
  uint64_t total_ = 0;
};

}  // namespace ds
