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

// Which computation a cached KV block or snapshot came from. `exact`: chunked prefills on the
// 64-token grid from the empty state — bit for bit what a cold run computes. `decoded`: decode
// steps, or a sequence that started from such a state — equal to a cold prefill of the same
// tokens only to rounding (the recurrent and chunked delta rule differ in the last bits, and every
// later layer sees that). Decoded entries are keyed apart, so an exact lookup never finds them.
enum class KeyFamily : uint8_t { exact, decoded };

inline uint64_t family_key(uint64_t key, KeyFamily family) {
  if (family == KeyFamily::exact) return key;
  uint64_t state = key ^ 0x6465'636f'6465'6421ull;  // "decoded!"
  return splitmix64(state);
}

// Tokens that stand for more than their ids: an image's run of pad tokens starting at `at`, whose
// content (`hash`) enters the chain there, so the same ids with another image give other keys.
struct KeyedContent {
  int64_t at = 0;
  uint64_t hash = 0;
};

inline uint64_t mix_content_key(uint64_t key, uint64_t content_hash) {
  uint64_t state = key ^ (content_hash * 0x9fb21c651e98df25ull) ^ 0x696d'6167'6521'0000ull;  // "image!"
  return splitmix64(state);
}

// keys[p] = key of tokens[0, p) for p = 0 .. tokens.size() (keys[0] = salt); `contents` (ascending
// `at`) are mixed in before the token at their position.
inline std::vector<uint64_t> prefix_keys(std::span<const int32_t> tokens, uint64_t salt,
                                         std::span<const KeyedContent> contents = {}) {
  std::vector<uint64_t> keys(tokens.size() + 1);
  keys[0] = salt;
  size_t next = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    uint64_t key = keys[i];
    for (; next < contents.size() && contents[next].at == static_cast<int64_t>(i); ++next)
      key = mix_content_key(key, contents[next].hash);
    keys[i + 1] = extend_prefix_key(key, tokens[i]);
  }
  return keys;
}

}  // namespace ds
