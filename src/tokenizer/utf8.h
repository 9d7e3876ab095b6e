// UTF-8 helpers: validation with the offset of the first bad byte, code point decoding, and the
// lossy conversion HF tokenizers' ByteLevel decoder uses (Rust String::from_utf8_lossy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ds::utf8 {

// Length of the longest valid UTF-8 prefix of `text` (== text.size() when all of it is valid).
size_t valid_prefix(std::string_view text);

// Decodes the code point at `pos` of valid UTF-8; advances `pos` past it.
char32_t decode(std::string_view text, size_t& pos);

void append(std::string& out, char32_t code_point);

// Bytes that start a valid sequence at `pos`: its length if complete (1..4); 0 if `text` ends inside a
// sequence that could still become valid; -n if the maximal invalid subpart there is n bytes long.
int sequence_at(std::string_view text, size_t pos);

// Rust from_utf8_lossy: each maximal invalid subpart becomes U+FFFD.
std::string lossy(std::string_view bytes);

}  // namespace ds::utf8
