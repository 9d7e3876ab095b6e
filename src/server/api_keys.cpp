// ApiKeys: Bearer-token checks in constant time, and key files.
#include "server/api_keys.h"

#include <algorithm>
#include <cctype>
#include <fstream>

#include "util/str_cat.h"
#include "util/trim.h"

namespace ds::server {

bool constant_time_equal(std::string_view a, std::string_view b) {
  // Every byte of the longer text is visited (the shorter one wraps around), and the differences
  // are OR-ed together, so no branch depends on the content.
  const size_t n = std::max(a.size(), b.size());
  unsigned diff = a.size() == b.size() ? 0u : 1u;
  if (a.empty() || b.empty()) return a.size() == b.size();
  for (size_t i = 0; i < n; ++i)
    diff |= static_cast<unsigned char>(a[i % a.size()]) ^ static_cast<unsigned char>(b[i % b.size()]);
  return diff == 0;
}

bool ApiKeys::accepts(std::string_view authorization) const {
  constexpr std::string_view kScheme = "bearer ";
  authorization = trim_spaces(authorization);
  if (authorization.size() <= kScheme.size()) return false;
  for (size_t i = 0; i < kScheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return false;
  const std::string_view presented = trim_spaces(authorization.substr(kScheme.size()));
  bool accepted = false;
  for (const std::string& key : keys_) accepted |= constant_time_equal(presented, key);  // no early exit
  return accepted;
}

Result<std::vector<std::string>> read_api_key_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::errorf("--api-key-file ", path, ": cannot be read (expected a file with one key per line)");
  std::vector<std::string> keys;
  for (std::string line; std::getline(in, line);)
    if (std::string_view key = trim_spaces(line); !key.empty()) keys.emplace_back(key);
  if (keys.empty()) return Status::errorf("--api-key-file ", path, ": expected one key per line, found no key");
  return keys;
}

}  // namespace ds::server
