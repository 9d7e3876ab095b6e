// The pre-tokenizer regex split: HF tokenizers' Split(Regex, behavior "isolated") over one string.
// tokenizers compiles the pattern with Oniguruma; here it is PCRE2 (UTF + UCP, JIT) after translation.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace ds {

class RegexSplitter {
 public:
  // `pattern` in Oniguruma syntax as tokenizer.json writes it.
  static Result<RegexSplitter> compile(const std::string& pattern);

  // Appends the pieces of `text` (matches and the gaps between them, in order, none empty).
  // Thread-safe: the compiled pattern is shared read-only, match data is per call.
  void split(std::string_view text, std::vector<std::string_view>& pieces) const;

  const std::string& pattern() const { return pattern_; }

 private:
  struct Code;
  std::string pattern_;
  std::shared_ptr<const Code> code_;
};

// Oniguruma's \s (Unicode White_Space) differs from PCRE2's (which adds U+180E); this rewrites \s and
// \S into explicit classes. Exposed for tests.
Result<std::string> onig_to_pcre2(const std::string& pattern);

}  // namespace ds
