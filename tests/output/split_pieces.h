// Test helper: every way the server may cut a text into pieces — whole, char by char, at every single
// split point, at every pair of split points (short texts), and random partitions with empty pieces.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/random.h"

namespace ds::testing {

using Pieces = std::vector<std::string>;

inline std::vector<Pieces> all_partitions(std::string_view text, uint64_t seed = 7) {
  std::vector<Pieces> out;
  out.push_back({std::string(text)});
  Pieces chars;
  for (char c : text) chars.emplace_back(1, c);
  out.push_back(chars);
  for (size_t i = 0; i <= text.size(); ++i) out.push_back({std::string(text.substr(0, i)), std::string(text.substr(i))});
  if (text.size() <= 120) {
    for (size_t i = 1; i < text.size(); ++i) {
      for (size_t j = i + 1; j < text.size(); ++j) {
        out.push_back({std::string(text.substr(0, i)), std::string(text.substr(i, j - i)), std::string(text.substr(j))});
      }
    }
  }
  Xoshiro256 rng(seed);
  for (int round = 0; round < 3; ++round) {
    Pieces pieces;
    size_t pos = 0;
    while (pos < text.size()) {
      const size_t len = rng.next() % 7;  // 0: an empty piece, as a token that decodes to nothing
      pieces.emplace_back(text.substr(pos, len));
      pos += std::min(len, text.size() - pos);
    }
    out.push_back(pieces);
  }
  return out;
}

}  // namespace ds::testing
