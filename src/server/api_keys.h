// ApiKeys: the keys a client must present as `Authorization: Bearer <key>` (--api-key,
// --api-key-file, DELTASERVE_API_KEY / VLLM_API_KEY). Comparison takes the same time whatever
// the presented key shares with a configured one, so timing tells an attacker nothing.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace ds::server {

class ApiKeys {
 public:
  ApiKeys() = default;
  explicit ApiKeys(std::vector<std::string> keys) : keys_(std::move(keys)) {}

  bool enabled() const { return !keys_.empty(); }
  size_t count() const { return keys_.size(); }
  // The value of an Authorization header: "Bearer <key>" (scheme case-insensitive, as RFC 7235)
  // with one of the keys. Every key is compared in full, in constant time per byte.
  bool accepts(std::string_view authorization) const;

 private:
  std::vector<std::string> keys_;
};

// Constant-time equality: the time depends on the lengths only, never on where the texts differ.
bool constant_time_equal(std::string_view a, std::string_view b);

// An --api-key-file: one key per line; blank lines and surrounding whitespace ignored. A file
// that cannot be read or holds no key is an error naming the file.
Result<std::vector<std::string>> read_api_key_file(const std::string& path);

}  // namespace ds::server
