// Test helpers: a temporary directory removed at scope exit, whole-file read/write, random floats and
// token ids.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "util/random.h"

namespace ds::test {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "deltaserve-test-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// n floats uniform in [lo, hi), deterministic in the seed.
inline std::vector<float> random_floats(size_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  Xoshiro256 rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = lo + rng.uniform() * (hi - lo);
  return v;
}

// [m, k] activations uniform in [-2, 2), deterministic in the seed.
inline std::vector<float> random_activations(int64_t m, int64_t k, uint64_t seed) {
  return random_floats(static_cast<size_t>(m * k), seed, -2.0f, 2.0f);
}

// n token ids in [0, vocab), deterministic in the seed.
inline std::vector<int32_t> random_tokens(int64_t n, int64_t vocab, uint64_t seed) {
  Xoshiro256 rng(seed);
  std::vector<int32_t> tokens;
  for (int64_t i = 0; i < n; ++i) tokens.push_back(static_cast<int32_t>(rng.next() % static_cast<uint64_t>(vocab)));
  return tokens;
}

// 64-bit FNV-1a of `size` bytes, as 16 hex digits (the fixture scripts record hashes of values so).
inline std::string fnv1a64(const void* data, size_t size) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (size_t i = 0; i < size; ++i) h = (h ^ static_cast<const uint8_t*>(data)[i]) * 0x100000001B3ull;
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Error message contains `needle` (so a test names the message it expects without freezing all of it).
#define EXPECT_ERROR_CONTAINS(result, needle)                                        \
  do {                                                                               \
    const auto& ds_result_ = (result);                                               \
    ASSERT_FALSE(ds_result_.ok()) << "expected an error containing: " << (needle);   \
    EXPECT_NE(ds_result_.status().message().find(needle), std::string::npos)        \
        << "message: " << ds_result_.status().message() << "\nexpected to contain: " << (needle); \
  } while (0)

}  // namespace ds::test
