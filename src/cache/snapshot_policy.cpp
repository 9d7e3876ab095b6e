// SnapshotPolicy: the three rules, collected and sorted once per prompt at arrival.
#include "cache/snapshot_policy.h"

#include <algorithm>

namespace ds {

std::vector<int64_t> SnapshotPolicy::positions(std::span<const int32_t> prompt) const {
  const auto n = static_cast<int64_t>(prompt.size());
  auto boundary = [](int64_t p) { return p / kSnapshotGrid * kSnapshotGrid; };
  std::vector<int64_t> out;
  for (int64_t i = 1; i < n; ++i)
    if (std::find(message_start_tokens.begin(), message_start_tokens.end(), prompt[static_cast<size_t>(i)]) !=
        message_start_tokens.end())
      for (int64_t p : {i, i + message_header_tokens}) out.push_back(boundary(p));
  if (n > 1) out.push_back(boundary(n - 1));
  for (int64_t p = 1024; p < n; p = p < 8192 ? 2 * p : p + 4096) out.push_back(p);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  std::erase_if(out, [&](int64_t p) { return p < kSnapshotGrid || p > n - 1; });
  return out;
}

}  // namespace ds
