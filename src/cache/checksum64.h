// checksum64: a 64-bit checksum of a byte range for the prefix cache's files, four independent
// multiply-rotate lanes of 8-byte words (the structure of xxHash64, written here: no dependency).
// Every step of a lane is a bijection of its state for a fixed word, so changing one byte of the
// input always changes the result; it detects corruption, it is not a defence against forgery.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace ds {

inline uint64_t checksum64(std::span<const std::byte> bytes) {
  constexpr uint64_t kPrime1 = 0x9e3779b185ebca87ull, kPrime2 = 0xc2b2ae3d27d4eb4full, kPrime3 = 0x165667b19e3779f9ull;
  auto rotl = [](uint64_t x, int r) { return (x << r) | (x >> (64 - r)); };
  auto round = [&](uint64_t lane, uint64_t word) { return rotl(lane ^ (word * kPrime2), 31) * kPrime1; };
  uint64_t lanes[4] = {kPrime1, kPrime2, kPrime3, kPrime1 ^ kPrime2};
  const size_t n = bytes.size();
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int l = 0; l < 4; ++l) {
      uint64_t word;
      std::memcpy(&word, bytes.data() + i + 8 * l, 8);
      lanes[l] = round(lanes[l], word);
    }
  }
  uint64_t hash = static_cast<uint64_t>(n) * kPrime3;
  for (uint64_t lane : lanes) hash = rotl(hash ^ lane, 27) * kPrime1 + kPrime2;
  for (; i < n; ++i) hash = rotl(hash ^ (static_cast<uint64_t>(bytes[i]) * kPrime3), 11) * kPrime1;
  hash ^= hash >> 33;
  hash *= kPrime2;
  hash ^= hash >> 29;
  return hash;
}

}  // namespace ds
