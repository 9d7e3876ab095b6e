// Tag scanning shared by the streaming parsers: earliest tag in a buffer, and how much of a buffer's
// tail must be held back because it may still grow into a tag (vLLM's partial_tag_overlap idea).
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace ds {

// Length of the longest suffix of `text` that is a proper prefix of `tag` (0 if none). Costs
// O(len(tag)^2) at most, so it is only for short, fixed tags (not user stop strings).
size_t partial_tag_overlap(std::string_view text, std::string_view tag);

// The largest partial_tag_overlap of `text` over all `tags`.
size_t partial_overlap_any(std::string_view text, std::span<const std::string_view> tags);

struct TagHit {
  size_t pos = std::string_view::npos;  // npos: no tag found
  size_t which = 0;                     // index into tags
};

// Earliest complete occurrence of any tag in text[from:], found by visiting each '<' once (every
// tag here starts with '<'), so a scan costs O(length × tags) whatever the tags' content.
TagHit find_first_tag(std::string_view text, size_t from, std::span<const std::string_view> tags);

}  // namespace ds
