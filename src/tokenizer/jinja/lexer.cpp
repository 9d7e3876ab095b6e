// Jinja lexer: the tag scanner and the expression tokenizer (names, numbers, strings with Python
// escapes, operators), mirroring jinja2.lexer's rules under HF's environment.
#include "tokenizer/jinja/lexer.h"

#include <cctype>
#include <cstdlib>

#include "tokenizer/utf8.h"

namespace ds::jinja::detail {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string normalize_newlines(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\r') {
      out += '\n';
      if (i + 1 < s.size() && s[i + 1] == '\n') ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

// Splits the source into chunks applying whitespace control.
Result<std::vector<Chunk>> scan(const Source& src) {
  std::string_view s = src.text_;
  if (!s.empty() && s.back() == '\n') s.remove_suffix(s.size() >= 2 && s[s.size() - 2] == '\r' ? 2 : 1);
  else if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  std::vector<Chunk> chunks;
  size_t pos = 0;
  bool strip_next = false;  // previous tag ended with -
  while (pos <= s.size()) {
    size_t start = s.find('{', pos);
    while (start != std::string_view::npos && start + 1 < s.size() && s[start + 1] != '{' && s[start + 1] != '%' && s[start + 1] != '#')
      start = s.find('{', start + 1);
    if (start != std::string_view::npos && start + 1 >= s.size()) start = std::string_view::npos;
    std::string text(s.substr(pos, start == std::string_view::npos ? std::string_view::npos : start - pos));
    const bool line_starting = pos == 0 || s[pos - 1] == '\n';
    if (strip_next) {
      size_t k = 0;
      while (k < text.size() && is_space(text[k])) ++k;
      text.erase(0, k);
    }
    if (start == std::string_view::npos) {
      if (!text.empty()) chunks.push_back({Chunk::Kind::text, normalize_newlines(text), 0, 0});
      break;
    }
    const char type = s[start + 1];
    const char modifier = start + 2 < s.size() ? s[start + 2] : '\0';
    if (modifier == '-') {
      while (!text.empty() && is_space(text.back())) text.pop_back();
    } else if (type != '{' && modifier != '+') {  // lstrip_blocks
      const size_t line_begin = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
      if (line_begin > 0 || line_starting) {
        bool blank = true;
        for (size_t k = line_begin; k < text.size(); ++k) blank = blank && (text[k] == ' ' || text[k] == '\t');
        if (blank) text.erase(line_begin);
      }
    }
    if (!text.empty()) chunks.push_back({Chunk::Kind::text, normalize_newlines(text), 0, 0});
    const size_t content = start + 2 + ((modifier == '-' || modifier == '+') ? 1 : 0);
    size_t end;
    bool strip_after = false;
    if (type == '#') {
      end = s.find("#}", content);
      if (end == std::string_view::npos) return src.error(start, "comment not closed: expected '#}'");
      strip_after = end > content && s[end - 1] == '-';
      pos = end + 2;
    } else {
      const char closer = type == '{' ? '}' : '%';
      end = content;
      char quote = 0;
      int depth = 0;
      for (; end + 1 < s.size(); ++end) {
        const char c = s[end];
        if (quote) {
          if (c == '\\') ++end;
          else if (c == quote) quote = 0;
          continue;
        }
        if (c == '\'' || c == '"') quote = c;
        else if (c == closer && s[end + 1] == '}' && depth == 0) break;  // jinja2 balances brackets first
        else if (c == '(' || c == '[' || c == '{') ++depth;
        else if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
      }
      if (end + 1 >= s.size()) return src.error(start, std::string("tag not closed: expected '") + closer + "}'");
      size_t content_end = end;
      if (end > content && s[end - 1] == '-') {
        strip_after = true;
        content_end = end - 1;
      } else if (end > content && s[end - 1] == '+') {
        content_end = end - 1;
      }
      Chunk chunk{type == '{' ? Chunk::Kind::var : Chunk::Kind::block, std::string(s.substr(content, content_end - content)), 0, 0};
      src.position(content, chunk.line, chunk.column);
      chunks.push_back(std::move(chunk));
      pos = end + 2;
    }
    strip_next = strip_after;
    if (!strip_after && type != '{' && pos < s.size()) {  // trim_blocks: one newline (\n, \r\n or \r)
      if (s[pos] == '\n') ++pos;
      else if (s[pos] == '\r') pos += pos + 1 < s.size() && s[pos + 1] == '\n' ? 2 : 1;
    }
  }
  return chunks;
}

namespace {

Result<std::string> unescape(std::string_view body, const Source&, int line, int column) {
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\' || i + 1 >= body.size()) {
      out += body[i];
      continue;
    }
    const char c = body[++i];
    switch (c) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case '0': out += '\0'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'v': out += '\v'; break;
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case '\n': break;
      case 'x': case 'u': case 'U': {
        const size_t n = c == 'x' ? 2 : c == 'u' ? 4 : 8;
        if (i + n >= body.size() + 0 && i + n > body.size() - 1 + 1)
          return Status::errorf("template line ", line, ", column ", column, ": truncated \\", c, " escape");
        const std::string hex(body.substr(i + 1, n));
        char* endp = nullptr;
        const unsigned long cp = std::strtoul(hex.c_str(), &endp, 16);
        if (hex.size() != n || *endp != '\0' || cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000))
          return Status::errorf("template line ", line, ", column ", column, ": invalid \\", c, " escape");
        utf8::append(out, static_cast<char32_t>(cp));
        i += n;
        break;
      }
      default: out += '\\'; out += c;  // Python keeps unknown escapes
    }
  }
  return out;
}

}  // namespace

Result<std::vector<Tok>> lex_expression(const Chunk& chunk, const Source& src) {
  std::vector<Tok> toks;
  const std::string& s = chunk.text;
  size_t i = 0;
  auto where = [&](size_t offset, int& line, int& column) {
    line = chunk.line;
    column = chunk.column;
    for (size_t k = 0; k < offset; ++k) {
      if (s[k] == '\n') { ++line; column = 1; } else { ++column; }
    }
  };
  while (i < s.size()) {
    if (is_space(s[i])) { ++i; continue; }
    int line, column;
    where(i, line, column);
    const char c = s[i];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      toks.push_back({Tok::Kind::name, s.substr(i, j - i), line, column});
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      bool is_float = false;
      while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      if (j + 1 < s.size() && s[j] == '.' && std::isdigit(static_cast<unsigned char>(s[j + 1]))) {
        is_float = true;
        ++j;
        while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
      }
      if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
        size_t k = j + 1;
        if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
        if (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) {
          is_float = true;
          j = k;
          while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
        }
      }
      std::string digits;
      for (size_t k = i; k < j; ++k) if (s[k] != '_') digits += s[k];
      toks.push_back({is_float ? Tok::Kind::floating : Tok::Kind::integer, digits, line, column});
      i = j;
    } else if (c == '\'' || c == '"') {
      size_t j = i + 1;
      while (j < s.size() && s[j] != c) j += s[j] == '\\' ? 2 : 1;
      if (j >= s.size()) return Status::errorf("template line ", line, ", column ", column, ": unterminated string");
      DS_ASSIGN_OR_RETURN(std::string text, unescape(std::string_view(s).substr(i + 1, j - i - 1), src, line, column));
      toks.push_back({Tok::Kind::string, normalize_newlines(text), line, column});
      i = j + 1;
    } else {
      static constexpr const char* kOps[] = {"==", "!=", "<=", ">=", "//", "**", "<", ">", "+", "-", "*", "/", "%", "~",
                                             "|", ".", ",", ":", "(", ")", "[", "]", "{", "}", "="};
      bool found = false;
      for (const char* op : kOps) {
        const size_t n = std::char_traits<char>::length(op);
        if (s.compare(i, n, op) == 0) {
          toks.push_back({Tok::Kind::op, op, line, column});
          i += n;
          found = true;
          break;
        }
      }
      if (!found) return Status::errorf("template line ", line, ", column ", column, ": unexpected character '", c, "'");
    }
  }
  int line, column;
  where(s.size(), line, column);
  toks.push_back({Tok::Kind::end, "", line, column});
  return toks;
}

}  // namespace ds::jinja::detail
