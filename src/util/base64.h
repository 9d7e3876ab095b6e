// Base64 (RFC 4648, standard alphabet) decoding of untrusted text: data: URLs of request bodies.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace ds {

// Decodes `text` (padding optional; no whitespace, no URL-safe alphabet). Refuses, naming the
// offset, a character outside the alphabet, misplaced padding and a length no encoding has; and
// a decoded size over `max_bytes` before decoding anything.
Result<std::vector<uint8_t>> decode_base64(std::string_view text, uint64_t max_bytes);

}  // namespace ds
