// Added tokens (tokenizer.json "added_tokens"): matched as whole strings before normalization and
// BPE, leftmost-longest, honouring lstrip / rstrip / single_word (HF tokenizers AddedVocabulary).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ds {

struct AddedToken {
  int32_t id = -1;
  std::string content;
  bool special = false;
  bool lstrip = false;
  bool rstrip = false;
  bool single_word = false;
  bool normalized = false;
};

// A piece of input: either an added token (id >= 0) or text to normalize and pre-tokenize.
struct Segment {
  std::string_view text;
  int32_t added_id = -1;
};

class AddedTokenMatcher {
 public:
  AddedTokenMatcher() = default;
  // Takes the tokens whose `normalized` flag equals `normalized`.
  AddedTokenMatcher(const std::vector<AddedToken>& tokens, bool normalized);

  bool empty() const { return tokens_.empty(); }
  // Splits `text` into text segments and added-token segments (matched text incl. stripped spaces).
  void split(std::string_view text, std::vector<Segment>& out) const;

 private:
  std::vector<AddedToken> tokens_;  // longest first, so the first hit at a position is the longest
  bool first_byte_[256] = {};
};

}  // namespace ds
