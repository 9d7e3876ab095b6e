// decode_base64: four characters → three bytes, every input checked.
#include "util/base64.h"

#include <array>
#include <cstdio>

namespace ds {
namespace {

constexpr std::array<int8_t, 256> kValues = [] {
  std::array<int8_t, 256> v{};
  v.fill(-1);
  const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (int i = 0; i < 64; ++i) v[static_cast<uint8_t>(alphabet[i])] = static_cast<int8_t>(i);
  return v;
}();

}  // namespace

Result<std::vector<uint8_t>> decode_base64(std::string_view text, uint64_t max_bytes) {
  size_t n = text.size();
  while (n > 0 && text.size() - n < 2 && text[n - 1] == '=') --n;  // up to two padding characters
  if (text.size() != n && text.size() % 4 != 0)
    return Status::errorf("base64: expected padding to complete a group of 4 characters, found ", text.size(),
                          " characters");
  if (n % 4 == 1) return Status::errorf("base64: ", n, " characters cannot be an encoding (one left over)");
  const uint64_t size = n / 4 * 3 + (n % 4 == 0 ? 0 : n % 4 - 1);
  if (size > max_bytes) return Status::errorf("base64: expected at most ", max_bytes, " decoded bytes, found ", size);
  std::vector<uint8_t> out;
  out.reserve(size);
  uint32_t bits = 0;
  int count = 0;
  for (size_t i = 0; i < n; ++i) {
    const int8_t value = kValues[static_cast<uint8_t>(text[i])];
    if (value < 0) {
      const auto c = static_cast<unsigned char>(text[i]);
      char found[16];
      std::snprintf(found, sizeof found, c >= 0x20 && c < 0x7f ? "'%c'" : "byte 0x%02x", c);
      return Status::errorf("base64: expected A-Z, a-z, 0-9, + or / at offset ", i, ", found ", found);
    }
    bits = (bits << 6) | static_cast<uint32_t>(value);
    if (++count == 4) {
      out.push_back(static_cast<uint8_t>(bits >> 16));
      out.push_back(static_cast<uint8_t>(bits >> 8));
      out.push_back(static_cast<uint8_t>(bits));
      bits = 0;
      count = 0;
    }
  }
  if (count == 2) out.push_back(static_cast<uint8_t>(bits >> 4));
  if (count == 3) {
    out.push_back(static_cast<uint8_t>(bits >> 10));
    out.push_back(static_cast<uint8_t>(bits >> 2));
  }
  return out;
}

}  // namespace ds
