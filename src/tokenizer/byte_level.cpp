// GPT-2 byte map (tokenizers ByteLevel `bytes_char`): printable Latin-1 bytes map to themselves, the
// other 68 bytes to U+0100.. in byte order.
#include "tokenizer/byte_level.h"

#include "tokenizer/utf8.h"

namespace ds {

ByteLevelMap::ByteLevelMap() {
  char_to_byte_.fill(-1);
  int next = 0;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    const char32_t c = printable ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + next++);
    byte_to_char_[b] = c;
    char_to_byte_[c] = static_cast<int16_t>(b);
  }
}

std::optional<unsigned char> ByteLevelMap::byte_of(char32_t c) const {
  if (c >= char_to_byte_.size() || char_to_byte_[c] < 0) return std::nullopt;
  return static_cast<unsigned char>(char_to_byte_[c]);
}

std::optional<std::string> ByteLevelMap::to_bytes(std::string_view text) const {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const auto byte = byte_of(utf8::decode(text, pos));
    if (!byte) return std::nullopt;
    out.push_back(static_cast<char>(*byte));
  }
  return out;
}

std::string ByteLevelMap::to_chars(std::string_view bytes) const {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char b : bytes) utf8::append(out, byte_to_char_[static_cast<unsigned char>(b)]);
  return out;
}

}  // namespace ds
