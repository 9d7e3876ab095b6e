// Tag scanning for the output parsers (see tag_scan.h); mirrors vLLM's partial_tag_overlap
// (vllm/tool_parsers/utils.py) for the hold-back rule.
#include "output/tag_scan.h"

#include <algorithm>

namespace ds {

size_t partial_tag_overlap(std::string_view text, std::string_view tag) {
  if (tag.empty()) return 0;
  const size_t longest = std::min(text.size(), tag.size() - 1);
  for (size_t k = longest; k > 0; --k) {
    if (text.substr(text.size() - k) == tag.substr(0, k)) return k;
  }
  return 0;
}

size_t partial_overlap_any(std::string_view text, std::span<const std::string_view> tags) {
  size_t best = 0;
  for (std::string_view tag : tags) best = std::max(best, partial_tag_overlap(text, tag));
  return best;
}

TagHit find_first_tag(std::string_view text, size_t from, std::span<const std::string_view> tags) {
  for (size_t pos = text.find('<', from); pos != std::string_view::npos; pos = text.find('<', pos + 1)) {
    const std::string_view rest = text.substr(pos);
    for (size_t i = 0; i < tags.size(); ++i) {
      if (rest.starts_with(tags[i])) return {pos, i};
    }
  }
  return {};
}

}  // namespace ds
