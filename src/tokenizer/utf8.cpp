// UTF-8 helpers (validation, decoding, lossy conversion with Unicode's "maximal subpart" rule,
// which is what Rust's String::from_utf8_lossy and so HF tokenizers' decoders implement).
#include "tokenizer/utf8.h"

namespace ds::utf8 {
namespace {

// Valid range of the second byte given the lead byte (Unicode Table 3-7); later bytes are 80..BF.
bool second_ok(unsigned char lead, unsigned char b) {
  if (lead == 0xE0) return b >= 0xA0 && b <= 0xBF;
  if (lead == 0xED) return b >= 0x80 && b <= 0x9F;
  if (lead == 0xF0) return b >= 0x90 && b <= 0xBF;
  if (lead == 0xF4) return b >= 0x80 && b <= 0x8F;
  return b >= 0x80 && b <= 0xBF;
}

int expected_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return -1;
}

}  // namespace

int sequence_at(std::string_view text, size_t pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  const int length = expected_length(lead);
  if (length < 0) return -1;
  for (int i = 1; i < length; ++i) {
    if (pos + i >= text.size()) return 0;
    const auto b = static_cast<unsigned char>(text[pos + i]);
    const bool ok = i == 1 ? second_ok(lead, b) : (b >= 0x80 && b <= 0xBF);
    if (!ok) return -i;
  }
  return length;
}

size_t valid_prefix(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    // ASCII runs dominate real text: skip them eight bytes at a time.
    while (pos + 8 <= text.size()) {
      uint64_t word;
      __builtin_memcpy(&word, text.data() + pos, 8);
      if (word & 0x8080808080808080ULL) break;
      pos += 8;
    }
    if (pos >= text.size()) break;
    const int n = sequence_at(text, pos);
    if (n <= 0) return pos;
    pos += static_cast<size_t>(n);
  }
  return pos;
}

char32_t decode(std::string_view text, size_t& pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  const int length = expected_length(lead);
  if (length <= 1) {
    ++pos;
    return lead;
  }
  char32_t cp = lead & (0x7F >> length);
  for (int i = 1; i < length; ++i) cp = (cp << 6) | (static_cast<unsigned char>(text[pos + i]) & 0x3F);
  pos += static_cast<size_t>(length);
  return cp;
}

void append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t pos = 0;
  while (pos < bytes.size()) {
    int n = sequence_at(bytes, pos);
    if (n == 0) n = -static_cast<int>(bytes.size() - pos);  // truncated at the end: one U+FFFD
    if (n > 0) {
      out.append(bytes.substr(pos, static_cast<size_t>(n)));
      pos += static_cast<size_t>(n);
    } else {
      out += "\xEF\xBF\xBD";
      pos += static_cast<size_t>(-n);
    }
  }
  return out;
}

}  // namespace ds::utf8
