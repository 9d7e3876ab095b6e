// Jinja lexer internals: the tag scanner (text / {{ }} / {% %} / {# #} with HF's whitespace control)
// and the expression tokenizer, as jinja2.lexer does them under trim_blocks / lstrip_blocks.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace ds::jinja::detail {

struct Tok {
  enum class Kind { name, integer, floating, string, op, end } kind;
  std::string text;
  int line, column;
};

struct Chunk {
  enum class Kind { text, var, block } kind;
  std::string text;
  int line, column;  // of the content start
};

class Source {
 public:
  explicit Source(std::string_view text) : text_(text) {}
  // Line and column (1-based) of a byte offset.
  void position(size_t offset, int& line, int& column) const {
    line = 1;
    column = 1;
    for (size_t i = 0; i < offset && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
  }
  Status error(size_t offset, const std::string& message) const {
    int line, column;
    position(offset, line, column);
    return Status::errorf("template line ", line, ", column ", column, ": ", message);
  }
  std::string_view text_;
};

// Splits the source into chunks applying whitespace control (trim_blocks, lstrip_blocks, `-` / `+`).
Result<std::vector<Chunk>> scan(const Source& src);

// Tokens of a {{ }} / {% %} chunk, ending with an `end` token.
Result<std::vector<Tok>> lex_expression(const Chunk& chunk, const Source& src);

}  // namespace ds::jinja::detail
