// Jinja parser: the statement parser (if / for / set / macro / call blocks, break / continue) over the
// lexer's chunks and expression parser, as jinja2.parser parses statements; and parse_template.
#include "tokenizer/jinja/parser.h"

#include "tokenizer/jinja/expr_parser.h"
#include "tokenizer/jinja/lexer.h"
#include "tokenizer/utf8.h"

namespace ds::jinja {
namespace {

using detail::Chunk;
using detail::ExprParser;
using detail::lex_expression;
using detail::scan;
using detail::Source;
using detail::Tok;

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
