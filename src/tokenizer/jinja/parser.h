// Jinja template parser: jinja2's lexer rules under HF's environment (trim_blocks, lstrip_blocks,
// `-` / `+` whitespace control, newlines normalized, one trailing newline dropped) and its grammar.
#pragma once

#include <string_view>

#include "tokenizer/jinja/ast.h"
#include "util/status.h"

namespace ds::jinja {

// Errors name line and column ("template line 3, column 7: unknown statement 'include'").
Result<Program> parse_template(std::string_view source);

}  // namespace ds::jinja
