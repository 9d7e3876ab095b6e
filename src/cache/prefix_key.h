// Prefix keys: a chained 64-bit hash over a token sequence, so the key of tokens[0, p) is known
// for every p in one pass and names both a full KV block (p at its end) and a DeltaNet snapshot.
// The chain starts from a salt that names the model, so caches of different models never meet.
// Keys only find candidates: blocks and snapshots also keep their tokens and are verified.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "util/random.h"

namespace ds {

inline uint64_t extend_prefix_key(uint64_t key, int32_t token) {
  uint64_t state = key ^ (static_cast<uint64_t>(static_cast<uint32_t>(token)) * 0xd6e8feb86659fd93ull);
  return splitmix64(state);
}

// keys[p] = key of tokens[0, p) for p = 0 .. tokens.size() (keys[0] = salt).
inline std::vector<uint64_t> prefix_keys(std::span<const int32_t> tokens, uint64_t salt) {
  std::vector<uint64_t> keys(tokens.size() + 1);
  keys[0] = salt;
  for (size_t i = 0; i < tokens.size(); ++i) keys[i + 1] = extend_prefix_key(keys[i], tokens[i]);
  return keys;
}

}  // namespace ds
