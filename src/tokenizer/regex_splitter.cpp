// Split(Regex, isolated) with PCRE2: every match is a piece and so is every non-empty gap between
// matches (tokenizers `SplitDelimiterBehavior::Isolated`).
#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/regex_splitter.h"

#include <pcre2.h>

namespace ds {

struct RegexSplitter::Code {
  pcre2_code* code = nullptr;
  bool jit = false;
  ~Code() { pcre2_code_free(code); }
};

namespace {

// Unicode White_Space, the set Oniguruma's \s matches in UTF-8 mode.
constexpr const char* kWhiteSpaceItems = "\\t-\\r\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}";

}  // namespace

Result<std::string> onig_to_pcre2(const std::string& pattern) {
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char next = pattern[i + 1];
      ++i;
      if (next == 's') {
        out += in_class ? std::string(kWhiteSpaceItems) : std::string("[") + kWhiteSpaceItems + "]";
      } else if (next == 'S') {
        if (in_class)
          return Status::errorf("pre-tokenizer regex: expected no \\S inside a character class, found one at offset ", i - 1);
        out += std::string("[^") + kWhiteSpaceItems + "]";
      } else {
        out += c;
        out += next;
      }
      continue;
    }
    if (c == '[' && !in_class) {
      in_class = true;
      out += c;
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];  // literal ] first
      continue;
    }
    if (c == '[' && in_class && i + 1 < pattern.size() && pattern[i + 1] == ':')
      return Status::errorf("pre-tokenizer regex: POSIX classes are not supported (offset ", i, ")");
    if (c == ']' && in_class) in_class = false;
    out += c;
  }
  return out;
}

Result<RegexSplitter> RegexSplitter::compile(const std::string& pattern) {
  DS_ASSIGN_OR_RETURN(const std::string translated, onig_to_pcre2(pattern));
  int error = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                                   PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof message);
    return Status::errorf("pre-tokenizer regex \"", pattern, "\": ", reinterpret_cast<const char*>(message),
                          " at offset ", offset);
  }
  auto owned = std::make_shared<Code>();
  owned->code = code;
  owned->jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;  // falls back to the interpreter
  RegexSplitter splitter;
  splitter.pattern_ = pattern;
  splitter.code_ = std::move(owned);
  return splitter;
}

void RegexSplitter::split(std::string_view text, std::vector<std::string_view>& pieces) const {
  pcre2_match_data* match = pcre2_match_data_create(1, nullptr);
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t start = 0, gap = 0;
  while (start < text.size()) {
    // Input was validated as UTF-8 by the tokenizer, so PCRE2 need not check it again.
    const int rc = code_->jit ? pcre2_jit_match(code_->code, subject, text.size(), start, PCRE2_NO_UTF_CHECK, match, nullptr)
                              : pcre2_match(code_->code, subject, text.size(), start, PCRE2_NO_UTF_CHECK, match, nullptr);
    if (rc < 0) break;
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match);
    const size_t begin = ovector[0], end = ovector[1];
    if (end == begin) {  // empty match: tokenizers skips it; step one character
      start = begin + 1;
      while (start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) ++start;
      continue;
    }
    if (begin > gap) pieces.push_back(text.substr(gap, begin - gap));
    pieces.push_back(text.substr(begin, end - begin));
    gap = start = end;
  }
  if (gap < text.size()) pieces.push_back(text.substr(gap));
  pcre2_match_data_free(match);
}

}  // namespace ds
