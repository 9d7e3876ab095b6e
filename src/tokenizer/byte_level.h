// The GPT-2 byte <-> printable character map of HF tokenizers' ByteLevel pre-tokenizer and decoder.
// Vocabulary strings are written in these characters; the tokenizer works on raw bytes internally.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace ds {

class ByteLevelMap {
 public:
  ByteLevelMap();
  char32_t char_of(unsigned char byte) const { return byte_to_char_[byte]; }
  // The byte a character stands for, or nullopt for characters outside the map.
  std::optional<unsigned char> byte_of(char32_t c) const;
  // Vocabulary string -> raw bytes; nullopt when a character is outside the map (e.g. "<|im_end|>" is
  // inside it, but an added token with a space is not).
  std::optional<std::string> to_bytes(std::string_view text) const;
  std::string to_chars(std::string_view bytes) const;

 private:
  std::array<char32_t, 256> byte_to_char_{};
  std::array<int16_t, 324> char_to_byte_{};  // every mapped character is below U+0144
};

}  // namespace ds
