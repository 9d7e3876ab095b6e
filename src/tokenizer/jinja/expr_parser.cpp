// Jinja expression parser: the grammar of jinja2.parser (conditional, boolean, comparison, arithmetic,
// postfix, filters, tests and literals), each precedence level one method.
#include "tokenizer/jinja/expr_parser.h"

#include <cerrno>
#include <cstdlib>

namespace ds::jinja::detail {

// Top level: a tuple without parentheses is allowed where jinja2 allows it (for / set targets' values).
Result<ExprPtr> ExprParser::parse_tuple_or_expr() {
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

Result<ExprPtr> ExprParser::parse_expression(bool with_condexpr) {
  if (++depth_ > 200) return error("expression nested too deeply");
  auto result = parse_expression_inner(with_condexpr);
  --depth_;
  return result;
}

Result<ExprPtr> ExprParser::parse_expression_inner(bool with_condexpr) {
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

Result<ExprPtr> ExprParser::parse_or() {
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

Result<ExprPtr> ExprParser::parse_and() {
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

Result<ExprPtr> ExprParser::parse_not() {
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

Result<ExprPtr> ExprParser::parse_compare() {
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

Result<ExprPtr> ExprParser::binary(ExprPtr left, const std::string& op, Result<ExprPtr> right) {
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

Result<ExprPtr> ExprParser::parse_math1() {
  DS_ASSIGN_OR_RETURN(ExprPtr left, parse_concat());
  while (is_op("+") || is_op("-")) {
    const std::string op = peek().text;
    skip();
    DS_ASSIGN_OR_RETURN(left, binary(std::move(left), op, parse_concat()));
  }
  return left;
}

Result<ExprPtr> ExprParser::parse_concat() {
  DS_ASSIGN_OR_RETURN(ExprPtr left, parse_math2());
  while (is_op("~")) {
    skip();
    DS_ASSIGN_OR_RETURN(left, binary(std::move(left), "~", parse_math2()));
  }
  return left;
}

Result<ExprPtr> ExprParser::parse_math2() {
  DS_ASSIGN_OR_RETURN(ExprPtr left, parse_pow());
  while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
    const std::string op = peek().text;
    skip();
    DS_ASSIGN_OR_RETURN(left, binary(std::move(left), op, parse_pow()));
  }
  return left;
}

Result<ExprPtr> ExprParser::parse_pow() {
  DS_ASSIGN_OR_RETURN(ExprPtr left, parse_unary(true));
  while (is_op("**")) {
    skip();
    DS_ASSIGN_OR_RETURN(left, binary(std::move(left), "**", parse_unary(true)));
  }
  return left;
}

Result<ExprPtr> ExprParser::parse_unary(bool with_filter) {
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

Status ExprParser::parse_call_args(Expr& call) {
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

Result<ExprPtr> ExprParser::parse_postfix(ExprPtr node) {
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

Result<ExprPtr> ExprParser::parse_filters_and_tests(ExprPtr node) {
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

Result<ExprPtr> ExprParser::parse_primary() {
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

}  // namespace ds::jinja::detail
