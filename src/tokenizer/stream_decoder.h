// StreamDecoder: incremental detokenization that never emits a broken UTF-8 sequence; the
// concatenation of its outputs (after finish) equals Tokenizer::decode of all ids.
#pragma once

#include <cstdint>
#include <string>

#include "tokenizer/tokenizer.h"

namespace ds {

class StreamDecoder {
 public:
  explicit StreamDecoder(const Tokenizer& tokenizer, bool skip_special_tokens = false)
      : tokenizer_(tokenizer), skip_special_(skip_special_tokens) {}

  // Text completed by this token (possibly empty while a multi-byte character is still open).
  std::string push(int32_t id);
  // Whatever is still held (an unfinished sequence becomes U+FFFD, as in whole decoding).
  std::string finish();

 private:
  const Tokenizer& tokenizer_;
  bool skip_special_;
  std::string pending_;  // at most the first bytes of one unfinished UTF-8 sequence
};

}  // namespace ds
