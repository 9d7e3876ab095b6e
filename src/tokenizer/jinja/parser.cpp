// Jinja parser: a tag scanner (text / {{ }} / {% %} / {# #}) and a recursive-descent expression parser
// with jinja2's precedence: if-else < or < and < not < compare < + - < ~ < * / // % < ** < unary < filters.
#include "tokenizer/jinja/parser.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "tokenizer/utf8.h"

namespace ds::jinja {
namespace {

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

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

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

class ExprParser {
 public:
  explicit ExprParser(std::vector<Tok> toks) : toks_(std::move(toks)) {}

  const Tok& peek(size_t ahead = 0) const { return toks_[std::min(pos_ + ahead, toks_.size() - 1)]; }
  bool at_end() const { return peek().kind == Tok::Kind::end; }
  bool is_op(const char* op, size_t ahead = 0) const { return peek(ahead).kind == Tok::Kind::op && peek(ahead).text == op; }
  bool is_name(const char* name, size_t ahead = 0) const { return peek(ahead).kind == Tok::Kind::name && peek(ahead).text == name; }
  Status error(const std::string& message) const {
    const Tok& t = peek();
    return Status::errorf("template line ", t.line, ", column ", t.column, ": ", message, ", found ",
                          t.kind == Tok::Kind::end ? std::string("end of tag") : "'" + t.text + "'");
  }
  Status expect_op(const char* op) {
    if (!is_op(op)) return error(std::string("expected '") + op + "'");
    ++pos_;
    return Status();
  }
  Result<std::string> expect_name() {
    if (peek().kind != Tok::Kind::name) return error("expected a name");
    return toks_[pos_++].text;
  }
  Status expect_end() { return at_end() ? Status() : error("expected end of tag"); }
  void skip() { ++pos_; }

  ExprPtr make(Expr::Kind kind) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->line = peek().line;
    e->column = peek().column;
    return e;
  }

  // Top level: a tuple without parentheses is allowed where jinja2 allows it (for / set targets' values).
  Result<ExprPtr> parse_tuple_or_expr() {
    DS_ASSIGN_OR_RETURN(ExprPtr first, parse_expression());
    if (!is_op(",")) return first;
    auto tuple = make(Expr::Kind::tuple);
    tuple->args.push_back(std::move(first));
    while (is_op(",")) {
      skip();
      if (at_end() || is_op(")")) break;
      DS_ASSIGN_OR_RETURN(ExprPtr item, parse_expression());
      tuple->args.push_back(std::move(item));
    }
    return tuple;
  }

  Result<ExprPtr> parse_expression(bool with_condexpr = true) {
    if (++depth_ > 200) return error("expression nested too deeply");
    auto result = parse_expression_inner(with_condexpr);
    --depth_;
    return result;
  }

  Result<ExprPtr> parse_expression_inner(bool with_condexpr) {
    DS_ASSIGN_OR_RETURN(ExprPtr expr, parse_or());
    while (with_condexpr && is_name("if")) {
      skip();
      auto cond = make(Expr::Kind::cond);
      DS_ASSIGN_OR_RETURN(ExprPtr test, parse_or());
      cond->args.push_back(std::move(expr));
      cond->args.push_back(std::move(test));
      if (is_name("else")) {
        skip();
        DS_ASSIGN_OR_RETURN(ExprPtr other, parse_expression());
        cond->args.push_back(std::move(other));
      }
      expr = std::move(cond);
    }
    return expr;
  }

  Result<ExprPtr> parse_or() {
    DS_ASSIGN_OR_RETURN(ExprPtr left, parse_and());
    while (is_name("or")) {
      auto node = make(Expr::Kind::or_);
      skip();
      DS_ASSIGN_OR_RETURN(ExprPtr right, parse_and());
      node->args.push_back(std::move(left));
      node->args.push_back(std::move(right));
      left = std::move(node);
    }
    return left;
  }

  Result<ExprPtr> parse_and() {
    DS_ASSIGN_OR_RETURN(ExprPtr left, parse_not());
    while (is_name("and")) {
      auto node = make(Expr::Kind::and_);
      skip();
      DS_ASSIGN_OR_RETURN(ExprPtr right, parse_not());
      node->args.push_back(std::move(left));
      node->args.push_back(std::move(right));
      left = std::move(node);
    }
    return left;
  }

  Result<ExprPtr> parse_not() {
    if (is_name("not")) {
      auto node = make(Expr::Kind::not_);
      skip();
      if (++depth_ > 200) return error("expression nested too deeply");
      auto operand = parse_not();
      --depth_;
      if (!operand.ok()) return operand.status();
      node->args.push_back(std::move(*operand));
      return node;
    }
    return parse_compare();
  }

  Result<ExprPtr> parse_compare() {
    DS_ASSIGN_OR_RETURN(ExprPtr first, parse_math1());
    ExprPtr node;
    while (true) {
      std::string op;
      if (peek().kind == Tok::Kind::op && (peek().text == "==" || peek().text == "!=" || peek().text == "<" ||
                                           peek().text == ">" || peek().text == "<=" || peek().text == ">=")) {
        op = peek().text;
        skip();
      } else if (is_name("in")) {
        op = "in";
        skip();
      } else if (is_name("not") && is_name("in", 1)) {
        op = "notin";
        skip();
        skip();
      } else {
        break;
      }
      if (!node) {
        node = make(Expr::Kind::compare);
        node->args.push_back(std::move(first));
      }
      DS_ASSIGN_OR_RETURN(ExprPtr operand, parse_math1());
      node->ops.push_back(op);
      node->args.push_back(std::move(operand));
    }
    return node ? std::move(node) : std::move(first);
  }

  Result<ExprPtr> binary(ExprPtr left, const std::string& op, Result<ExprPtr> right) {
    if (!right.ok()) return right.status();
    auto node = std::make_unique<Expr>();
    node->kind = Expr::Kind::binary;
    node->line = left->line;
    node->column = left->column;
    node->name = op;
    node->args.push_back(std::move(left));
    node->args.push_back(std::move(*right));
    return node;
  }

  Result<ExprPtr> parse_math1() {
    DS_ASSIGN_OR_RETURN(ExprPtr left, parse_concat());
    while (is_op("+") || is_op("-")) {
      const std::string op = peek().text;
      skip();
      DS_ASSIGN_OR_RETURN(left, binary(std::move(left), op, parse_concat()));
    }
    return left;
  }

  Result<ExprPtr> parse_concat() {
    DS_ASSIGN_OR_RETURN(ExprPtr left, parse_math2());
    while (is_op("~")) {
      skip();
      DS_ASSIGN_OR_RETURN(left, binary(std::move(left), "~", parse_math2()));
    }
    return left;
  }

  Result<ExprPtr> parse_math2() {
    DS_ASSIGN_OR_RETURN(ExprPtr left, parse_pow());
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const std::string op = peek().text;
      skip();
      DS_ASSIGN_OR_RETURN(left, binary(std::move(left), op, parse_pow()));
    }
    return left;
  }

  Result<ExprPtr> parse_pow() {
    DS_ASSIGN_OR_RETURN(ExprPtr left, parse_unary(true));
    while (is_op("**")) {
      skip();
      DS_ASSIGN_OR_RETURN(left, binary(std::move(left), "**", parse_unary(true)));
    }
    return left;
  }

  Result<ExprPtr> parse_unary(bool with_filter) {
    ExprPtr node;
    if (is_op("-") || is_op("+")) {
      node = make(is_op("-") ? Expr::Kind::neg : Expr::Kind::pos);
      skip();
      if (++depth_ > 200) return error("expression nested too deeply");
      auto operand = parse_unary(false);
      --depth_;
      if (!operand.ok()) return operand.status();
      node->args.push_back(std::move(*operand));
    } else {
      DS_ASSIGN_OR_RETURN(node, parse_primary());
    }
    DS_ASSIGN_OR_RETURN(node, parse_postfix(std::move(node)));
    if (with_filter) {
      DS_ASSIGN_OR_RETURN(node, parse_filters_and_tests(std::move(node)));
    }
    return node;
  }

  Status parse_call_args(Expr& call) {
    DS_TRY(expect_op("("));
    const size_t callee = call.args.size();  // the callee / filtered value is args[0]
    while (!is_op(")")) {
      if (call.args.size() > callee || !call.kwargs.empty()) DS_TRY(expect_op(","));
      if (is_op(")")) break;
      if (peek().kind == Tok::Kind::name && is_op("=", 1)) {
        std::string key = peek().text;
        skip();
        skip();
        DS_ASSIGN_OR_RETURN(ExprPtr value, parse_expression());
        call.kwargs.emplace_back(std::move(key), std::move(value));
      } else {
        if (!call.kwargs.empty()) return error("positional argument after keyword argument");
        DS_ASSIGN_OR_RETURN(ExprPtr value, parse_expression());
        call.args.push_back(std::move(value));
      }
    }
    return expect_op(")");
  }

  Result<ExprPtr> parse_postfix(ExprPtr node) {
    while (true) {
      if (is_op(".")) {
        skip();
        auto attr = make(Expr::Kind::get_attr);
        if (peek().kind == Tok::Kind::integer) {  // x.0 means x[0]
          attr->kind = Expr::Kind::get_item;
          auto index = make(Expr::Kind::literal);
          index->value = Value::integer(std::atoll(peek().text.c_str()));
          skip();
          attr->args.push_back(std::move(node));
          attr->args.push_back(std::move(index));
        } else {
          DS_ASSIGN_OR_RETURN(attr->name, expect_name());
          attr->args.push_back(std::move(node));
        }
        node = std::move(attr);
      } else if (is_op("[")) {
        skip();
        auto item = make(Expr::Kind::get_item);
        item->args.push_back(std::move(node));
        // Slice a:b:c (each part optional) or a plain index.
        ExprPtr parts[3];
        int part = 0;
        bool is_slice = false;
        while (true) {
          if (is_op(":")) {
            is_slice = true;
            if (++part > 2) return error("expected at most two ':' in a slice");
            skip();
            continue;
          }
          if (is_op("]")) break;
          if (parts[part]) return error("expected ':' or ']'");
          DS_ASSIGN_OR_RETURN(parts[part], parse_expression());
        }
        skip();
        if (is_slice) {
          item->kind = Expr::Kind::slice;
          for (int k = 0; k < 3; ++k) {
            item->has[k] = parts[k] != nullptr;
            item->args.push_back(parts[k] ? std::move(parts[k]) : nullptr);
          }
        } else {
          if (!parts[0]) return error("expected an index");
          item->args.push_back(std::move(parts[0]));
        }
        node = std::move(item);
      } else if (is_op("(")) {
        auto call = make(Expr::Kind::call);
        call->args.push_back(std::move(node));
        DS_TRY(parse_call_args(*call));
        node = std::move(call);
      } else {
        return node;
      }
    }
  }

  Result<ExprPtr> parse_filters_and_tests(ExprPtr node) {
    while (true) {
      if (is_op("|")) {
        skip();
        auto filter = make(Expr::Kind::filter);
        DS_ASSIGN_OR_RETURN(filter->name, expect_name());
        while (is_op(".")) {  // dotted filter names
          skip();
          DS_ASSIGN_OR_RETURN(std::string part, expect_name());
          filter->name += "." + part;
        }
        filter->args.push_back(std::move(node));
        if (is_op("(")) DS_TRY(parse_call_args(*filter));
        node = std::move(filter);
      } else if (is_name("is")) {
        skip();
        auto test = make(Expr::Kind::test);
        if (is_name("not")) {
          test->negated = true;
          skip();
        }
        if (peek().kind == Tok::Kind::name) {
          test->name = peek().text;
          skip();
        } else if (peek().kind == Tok::Kind::op && (peek().text == "==" || peek().text == "!=" || peek().text == "<" ||
                                                    peek().text == ">" || peek().text == "<=" || peek().text == ">=")) {
          test->name = peek().text;
          skip();
        } else {
          return error("expected a test name after 'is'");
        }
        test->args.push_back(std::move(node));
        if (is_op("(")) {
          DS_TRY(parse_call_args(*test));
        } else if (peek().kind == Tok::Kind::string || peek().kind == Tok::Kind::integer || peek().kind == Tok::Kind::floating ||
                   (peek().kind == Tok::Kind::name && !is_name("and") && !is_name("or") && !is_name("else") && !is_name("if") &&
                    !is_name("in") && !is_name("not") && !is_name("is"))) {
          DS_ASSIGN_OR_RETURN(ExprPtr arg, parse_primary());
          DS_ASSIGN_OR_RETURN(arg, parse_postfix(std::move(arg)));
          test->args.push_back(std::move(arg));
        }
        node = std::move(test);
      } else {
        return node;
      }
    }
  }

  Result<ExprPtr> parse_primary() {
    const Tok& t = peek();
    if (++depth_ > 200) return error("expression nested too deeply");
    struct Guard { int& d; ~Guard() { --d; } } guard{depth_};
    if (t.kind == Tok::Kind::name) {
      auto node = make(Expr::Kind::literal);
      if (t.text == "true" || t.text == "True") node->value = Value::boolean(true);
      else if (t.text == "false" || t.text == "False") node->value = Value::boolean(false);
      else if (t.text == "none" || t.text == "None") node->value = Value::none();
      else {
        node->kind = Expr::Kind::name;
        node->name = t.text;
      }
      skip();
      return node;
    }
    if (t.kind == Tok::Kind::string) {
      auto node = make(Expr::Kind::literal);
      std::string text = t.text;
      skip();
      while (peek().kind == Tok::Kind::string) {  // adjacent literals concatenate
        text += peek().text;
        skip();
      }
      node->value = Value::string(std::move(text));
      return node;
    }
    if (t.kind == Tok::Kind::integer) {
      auto node = make(Expr::Kind::literal);
      errno = 0;
      const long long v = std::strtoll(t.text.c_str(), nullptr, 10);
      if (errno == ERANGE) return error("integer literal out of range");
      node->value = Value::integer(v);
      skip();
      return node;
    }
    if (t.kind == Tok::Kind::floating) {
      auto node = make(Expr::Kind::literal);
      node->value = Value::floating(std::strtod(t.text.c_str(), nullptr));
      skip();
      return node;
    }
    if (is_op("(")) {
      skip();
      if (is_op(")")) {
        skip();
        return make(Expr::Kind::tuple);
      }
      DS_ASSIGN_OR_RETURN(ExprPtr inner, parse_tuple_or_expr());
      DS_TRY(expect_op(")"));
      return inner;
    }
    if (is_op("[")) {
      auto node = make(Expr::Kind::list);
      skip();
      while (!is_op("]")) {
        if (!node->args.empty()) DS_TRY(expect_op(","));
        if (is_op("]")) break;
        DS_ASSIGN_OR_RETURN(ExprPtr item, parse_expression());
        node->args.push_back(std::move(item));
      }
      skip();
      return node;
    }
    if (is_op("{")) {
      auto node = make(Expr::Kind::dict);
      skip();
      while (!is_op("}")) {
        if (!node->args.empty()) DS_TRY(expect_op(","));
        if (is_op("}")) break;
        DS_ASSIGN_OR_RETURN(ExprPtr key, parse_expression());
        DS_TRY(expect_op(":"));
        DS_ASSIGN_OR_RETURN(ExprPtr value, parse_expression());
        node->args.push_back(std::move(key));
        node->args.push_back(std::move(value));
      }
      skip();
      return node;
    }
    return error("expected an expression");
  }

 private:
  std::vector<Tok> toks_;
  size_t pos_ = 0;
  int depth_ = 0;
};

class TemplateParser {
 public:
  TemplateParser(std::vector<Chunk> chunks, const Source& src) : chunks_(std::move(chunks)), src_(src) {}

  // Parses statements until one of `stop` block keywords (left unconsumed) or the end.
  Status parse_body(Body& body, const std::vector<std::string>& stop, std::string& stopped_at, int depth) {
    if (depth > 100) return Status::error("template nested too deeply (more than 100 blocks)");
    while (index_ < chunks_.size()) {
      const Chunk& chunk = chunks_[index_];
      if (chunk.kind == Chunk::Kind::text) {
        auto node = std::make_unique<Node>();
        node->kind = Node::Kind::text;
        node->text = chunk.text;
        body.push_back(std::move(node));
        ++index_;
        continue;
      }
      DS_ASSIGN_OR_RETURN(std::vector<Tok> toks, lex_expression(chunk, src_));
      ExprParser p(std::move(toks));
      if (chunk.kind == Chunk::Kind::var) {
        auto node = std::make_unique<Node>();
        node->kind = Node::Kind::output;
        node->line = chunk.line;
        node->column = chunk.column;
        DS_ASSIGN_OR_RETURN(node->expr, p.parse_tuple_or_expr());
        DS_TRY(p.expect_end());
        body.push_back(std::move(node));
        ++index_;
        continue;
      }
      if (p.peek().kind != Tok::Kind::name) return p.error("expected a statement name");
      const std::string keyword = p.peek().text;
      const int keyword_line = p.peek().line, keyword_column = p.peek().column;
      for (const std::string& s : stop) {
        if (s == keyword) {
          stopped_at = keyword;
          return Status();
        }
      }
      ++index_;
      p.skip();
      auto node = std::make_unique<Node>();
      node->line = chunk.line;
      node->column = chunk.column;
      if (keyword == "if") {
        DS_TRY(parse_if(p, *node, depth));
      } else if (keyword == "for") {
        DS_TRY(parse_for(p, *node, depth));
      } else if (keyword == "set") {
        DS_TRY(parse_set(p, *node, depth));
      } else if (keyword == "macro") {
        DS_TRY(parse_macro(p, *node, depth));
      } else if (keyword == "call") {
        DS_TRY(parse_call_block(p, *node, depth));
      } else if (keyword == "break" || keyword == "continue") {
        node->kind = keyword == "break" ? Node::Kind::break_ : Node::Kind::continue_;
        DS_TRY(p.expect_end());
      } else {
        return Status::errorf("template line ", keyword_line, ", column ", keyword_column, ": unknown statement '", keyword,
                              "' (expected if, for, set, macro, call, break, continue", stop.empty() ? "" : " or end of block",
                              ")");
      }
      body.push_back(std::move(node));
    }
    if (!stop.empty()) return Status::errorf("template: unexpected end of template, expected '", stop.back(), "'");
    return Status();
  }

  // The statement tag that ended a body: consumes it and returns a parser over its tokens.
  Result<ExprParser> take_tag() {
    DS_ASSIGN_OR_RETURN(std::vector<Tok> toks, lex_expression(chunks_[index_], src_));
    ++index_;
    ExprParser p(std::move(toks));
    p.skip();
    return p;
  }

  Status parse_if(ExprParser& p, Node& node, int depth) {
    node.kind = Node::Kind::if_;
    DS_ASSIGN_OR_RETURN(ExprPtr cond, p.parse_tuple_or_expr());
    DS_TRY(p.expect_end());
    while (true) {
      Body body;
      std::string stopped;
      DS_TRY(parse_body(body, {"elif", "else", "endif"}, stopped, depth + 1));
      node.branches.emplace_back(std::move(cond), std::move(body));
      DS_ASSIGN_OR_RETURN(ExprParser tag, take_tag());
      if (stopped == "endif") return tag.expect_end();
      if (stopped == "else") {
        DS_TRY(tag.expect_end());
        DS_TRY(parse_body(node.else_body, {"endif"}, stopped, depth + 1));
        DS_ASSIGN_OR_RETURN(ExprParser end, take_tag());
        return end.expect_end();
      }
      DS_ASSIGN_OR_RETURN(cond, tag.parse_tuple_or_expr());
      DS_TRY(tag.expect_end());
    }
  }

  Status parse_targets(ExprParser& p, std::vector<std::string>& targets) {
    const bool paren = p.is_op("(");
    if (paren) p.skip();
    while (true) {
      DS_ASSIGN_OR_RETURN(std::string name, p.expect_name());
      targets.push_back(std::move(name));
      if (!p.is_op(",")) break;
      p.skip();
    }
    if (paren) DS_TRY(p.expect_op(")"));
    return Status();
  }

  Status parse_for(ExprParser& p, Node& node, int depth) {
    node.kind = Node::Kind::for_;
    DS_TRY(parse_targets(p, node.targets));
    if (!p.is_name("in")) return p.error("expected 'in'");
    p.skip();
    DS_ASSIGN_OR_RETURN(node.expr, p.parse_expression(false));
    if (p.is_name("if")) {
      p.skip();
      DS_ASSIGN_OR_RETURN(node.filter, p.parse_expression());
    }
    if (p.is_name("recursive")) return p.error("recursive loops are not supported");
    DS_TRY(p.expect_end());
    std::string stopped;
    DS_TRY(parse_body(node.body, {"else", "endfor"}, stopped, depth + 1));
    DS_ASSIGN_OR_RETURN(ExprParser tag, take_tag());
    DS_TRY(tag.expect_end());
    if (stopped == "else") {
      DS_TRY(parse_body(node.else_body, {"endfor"}, stopped, depth + 1));
      DS_ASSIGN_OR_RETURN(ExprParser end, take_tag());
      DS_TRY(end.expect_end());
    }
    return Status();
  }

  Status parse_set(ExprParser& p, Node& node, int depth) {
    node.kind = Node::Kind::set;
    DS_ASSIGN_OR_RETURN(std::string first, p.expect_name());
    if (p.is_op(".")) {
      p.skip();
      DS_ASSIGN_OR_RETURN(node.ns_attr, p.expect_name());
      node.targets.push_back(first);
    } else {
      node.targets.push_back(first);
      while (p.is_op(",")) {
        p.skip();
        DS_ASSIGN_OR_RETURN(std::string name, p.expect_name());
        node.targets.push_back(std::move(name));
      }
    }
    if (p.at_end() && node.targets.size() == 1 && node.ns_attr.empty()) {  // block set
      node.kind = Node::Kind::set_block;
      std::string stopped;
      DS_TRY(parse_body(node.body, {"endset"}, stopped, depth + 1));
      DS_ASSIGN_OR_RETURN(ExprParser tag, take_tag());
      return tag.expect_end();
    }
    DS_TRY(p.expect_op("="));
    DS_ASSIGN_OR_RETURN(node.expr, p.parse_tuple_or_expr());
    return p.expect_end();
  }

  Status parse_params(ExprParser& p, Node& node) {
    DS_TRY(p.expect_op("("));
    while (!p.is_op(")")) {
      if (!node.targets.empty()) DS_TRY(p.expect_op(","));
      DS_ASSIGN_OR_RETURN(std::string name, p.expect_name());
      node.targets.push_back(std::move(name));
      if (p.is_op("=")) {
        p.skip();
        DS_ASSIGN_OR_RETURN(ExprPtr value, p.parse_expression());
        node.defaults.push_back(std::move(value));
      } else {
        if (!node.defaults.empty() && node.defaults.back()) return p.error("parameter without default after one with a default");
        node.defaults.push_back(nullptr);
      }
    }
    return p.expect_op(")");
  }

  Status parse_macro(ExprParser& p, Node& node, int depth) {
    node.kind = Node::Kind::macro;
    DS_ASSIGN_OR_RETURN(node.text, p.expect_name());
    DS_TRY(parse_params(p, node));
    DS_TRY(p.expect_end());
    std::string stopped;
    DS_TRY(parse_body(node.body, {"endmacro"}, stopped, depth + 1));
    DS_ASSIGN_OR_RETURN(ExprParser tag, take_tag());
    if (!tag.at_end()) tag.skip();  // {% endmacro name %}
    return tag.expect_end();
  }

  Status parse_call_block(ExprParser& p, Node& node, int depth) {
    node.kind = Node::Kind::call_block;
    if (p.is_op("(")) DS_TRY(parse_params(p, node));
    DS_ASSIGN_OR_RETURN(node.expr, p.parse_expression());
    if (node.expr->kind != Expr::Kind::call) return p.error("expected a macro call after 'call'");
    DS_TRY(p.expect_end());
    std::string stopped;
    DS_TRY(parse_body(node.body, {"endcall"}, stopped, depth + 1));
    DS_ASSIGN_OR_RETURN(ExprParser tag, take_tag());
    return tag.expect_end();
  }

  Status finish() {
    if (index_ < chunks_.size()) {
      const Chunk& chunk = chunks_[index_];
      DS_ASSIGN_OR_RETURN(std::vector<Tok> toks, lex_expression(chunk, src_));
      return Status::errorf("template line ", chunk.line, ", column ", chunk.column, ": unexpected '", toks[0].text,
                            "' outside of any block");
    }
    return Status();
  }

 private:
  std::vector<Chunk> chunks_;
  const Source& src_;
  size_t index_ = 0;
};

}  // namespace

Result<Program> parse_template(std::string_view source) {
  if (utf8::valid_prefix(source) != source.size())
    return Status::errorf("template: expected UTF-8, found an invalid byte at offset ", utf8::valid_prefix(source));
  const Source src(source);
  DS_ASSIGN_OR_RETURN(std::vector<Chunk> chunks, scan(src));
  Program program;
  TemplateParser parser(std::move(chunks), src);
  std::string stopped;
  DS_TRY(parser.parse_body(program.body, {}, stopped, 0));
  DS_TRY(parser.finish());
  return program;
}

}  // namespace ds::jinja
