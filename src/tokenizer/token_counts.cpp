// TokenCounts: counts in an array indexed by id; the ordering is one stable sort.
#include "tokenizer/token_counts.h"

#include <algorithm>

#include "util/check.h"

namespace ds {

void TokenCounts::add(std::span<const int32_t> ids) {
  for (int32_t id : ids) {
    DS_CHECK(id >= 0 && id < id_limit(), "token id ", id, " outside [0, ", id_limit(), ")");
    ++counts_[static_cast<size_t>(id)];
  }
  total_ += ids.size();
}

int64_t TokenCounts::distinct() const {
  return std::count_if(counts_.begin(), counts_.end(), [](uint64_t c) { return c > 0; });
}

std::vector<int32_t> TokenCounts::ordering(FunctionRef<bool(int32_t)> keep) const {
  std::vector<int32_t> ids;
  for (int32_t id = 0; id < id_limit(); ++id)
    if (keep(id)) ids.push_back(id);
  std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return count(a) > count(b); });
  return ids;
}

double TokenCounts::coverage(std::span<const int32_t> ordering, int64_t n) const {
  if (total_ == 0) return 0.0;
  uint64_t covered = 0;
  const size_t end = static_cast<size_t>(std::clamp<int64_t>(n, 0, static_cast<int64_t>(ordering.size())));
  for (size_t i = 0; i < end; ++i) covered += count(ordering[i]);
  return static_cast<double>(covered) / static_cast<double>(total_);
}

double TokenCounts::coverage_below(int64_t n) const {
  if (total_ == 0) return 0.0;
  uint64_t covered = 0;
  for (int64_t id = 0; id < std::min<int64_t>(n, id_limit()); ++id) covered += counts_[static_cast<size_t>(id)];
  return static_cast<double>(covered) / static_cast<double>(total_);
}

}  // namespace ds
