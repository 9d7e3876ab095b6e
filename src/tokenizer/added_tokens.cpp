// Added-token matching as HF's AddedVocabulary::find_matches: scan left to right, at each position the
// longest token that starts there (aho-corasick LeftmostLongest), subject to single_word; lstrip and
// rstrip widen the match over Unicode whitespace on that side.
#include "tokenizer/added_tokens.h"

#include <algorithm>
#include <cctype>

#include "tokenizer/utf8.h"

namespace ds {
namespace {

bool is_white_space(char32_t c) {  // Rust char::is_whitespace (Unicode White_Space)
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool is_word_byte(unsigned char c) { return std::isalnum(c) || c == '_' || c >= 0x80; }

// Code point that ends at `end` (valid UTF-8 before it).
char32_t char_before(std::string_view text, size_t end, size_t& start) {
  start = end - 1;
  while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
  size_t pos = start;
  return utf8::decode(text, pos);
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(const std::vector<AddedToken>& tokens, bool normalized) {
  for (const AddedToken& token : tokens)
    if (token.normalized == normalized && !token.content.empty()) tokens_.push_back(token);
  std::stable_sort(tokens_.begin(), tokens_.end(),
                   [](const AddedToken& a, const AddedToken& b) { return a.content.size() > b.content.size(); });
  for (const AddedToken& token : tokens_) first_byte_[static_cast<unsigned char>(token.content[0])] = true;
}

void AddedTokenMatcher::split(std::string_view text, std::vector<Segment>& out) const {
  size_t emitted = 0;  // text before this is already in `out`
  size_t pos = 0;
  while (pos < text.size()) {
    if (!first_byte_[static_cast<unsigned char>(text[pos])]) {
      ++pos;
      continue;
    }
    const AddedToken* hit = nullptr;
    for (const AddedToken& token : tokens_) {
      if (text.compare(pos, token.content.size(), token.content) != 0) continue;
      if (token.single_word) {
        // A word character must not touch the match on either side (HF checks alphanumerics).
        const size_t end = pos + token.content.size();
        const bool left_ok = pos == 0 || !is_word_byte(static_cast<unsigned char>(text[pos - 1]));
        const bool right_ok = end == text.size() || !is_word_byte(static_cast<unsigned char>(text[end]));
        if (!left_ok || !right_ok) continue;
      }
      hit = &token;
      break;
    }
    if (hit == nullptr) {
      ++pos;
      continue;
    }
    size_t start = pos, end = pos + hit->content.size();
    if (hit->lstrip) {
      size_t char_start = 0;
      while (start > emitted && is_white_space(char_before(text, start, char_start))) start = char_start;
    }
    if (hit->rstrip) {
      size_t next = end;
      while (next < text.size()) {
        size_t after = next;
        if (!is_white_space(utf8::decode(text, after))) break;
        next = after;
      }
      end = next;
    }
    if (start > emitted) out.push_back({text.substr(emitted, start - emitted), -1});
    out.push_back({text.substr(start, end - start), hit->id});
    emitted = pos = end;
  }
  if (emitted < text.size()) out.push_back({text.substr(emitted), -1});
}

}  // namespace ds
