// Test helpers: a temporary directory removed at scope exit, and whole-file read/write.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

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
