// Streaming ByteLevel decoding: complete sequences go out at once, a sequence cut at the end of the
// bytes seen so far is held, invalid bytes become U+FFFD per maximal subpart (from_utf8_lossy).
#include "tokenizer/stream_decoder.h"

#include "tokenizer/utf8.h"

namespace ds {

std::string StreamDecoder::push(int32_t id) {
  if (!tokenizer_.is_known(id) || (skip_special_ && tokenizer_.is_special(id))) return {};
  pending_ += tokenizer_.token_bytes(id);
  std::string out;
  size_t pos = 0;
  while (pos < pending_.size()) {
    const int n = utf8::sequence_at(pending_, pos);
    if (n == 0) break;  // could still complete: hold it
    if (n > 0) {
      out.append(pending_, pos, static_cast<size_t>(n));
      pos += static_cast<size_t>(n);
    } else {
      out += "\xEF\xBF\xBD";
      pos += static_cast<size_t>(-n);
    }
  }
  pending_.erase(0, pos);
  return out;
}

std::string StreamDecoder::finish() {
  std::string out = pending_.empty() ? std::string() : utf8::lossy(pending_);
  pending_.clear();
  return out;
}

}  // namespace ds
