// Jinja expression parser: recursive descent over lexer.h's tokens with jinja2.parser's precedence:
// if-else < or < and < not < compare < + - < ~ < * / // % < ** < unary < filters / tests.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/lexer.h"
#include "util/status.h"

namespace ds::jinja::detail {

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
  Result<ExprPtr> parse_tuple_or_expr();
  Result<ExprPtr> parse_expression(bool with_condexpr = true);
  Result<ExprPtr> parse_expression_inner(bool with_condexpr);
  Result<ExprPtr> parse_or();
  Result<ExprPtr> parse_and();
  Result<ExprPtr> parse_not();
  Result<ExprPtr> parse_compare();
  Result<ExprPtr> binary(ExprPtr left, const std::string& op, Result<ExprPtr> right);
  Result<ExprPtr> parse_math1();
  Result<ExprPtr> parse_concat();
  Result<ExprPtr> parse_math2();
  Result<ExprPtr> parse_pow();
  Result<ExprPtr> parse_unary(bool with_filter);
  Status parse_call_args(Expr& call);
  Result<ExprPtr> parse_postfix(ExprPtr node);
  Result<ExprPtr> parse_filters_and_tests(ExprPtr node);
  Result<ExprPtr> parse_primary();

 private:
  std::vector<Tok> toks_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace ds::jinja::detail
