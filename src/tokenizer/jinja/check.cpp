// Compile-time checks of a parsed template: unknown filters / tests and break / continue outside a loop,
// which jinja2 reports when it compiles a template (before rendering starts).
#include "tokenizer/jinja/render_internal.h"

#include <algorithm>
#include <iterator>

namespace ds::jinja::detail {

bool known(const char* const* begin, const char* const* end, const std::string& name) {
  return std::any_of(begin, end, [&](const char* n) { return name == n; });
}

namespace {

Status check_expr(const Expr& e) {
  if (e.kind == Expr::Kind::filter && !known(std::begin(kFilters), std::end(kFilters), e.name))
    return Status::error(where(e.line, e.column) + "unknown filter '" + e.name + "'");
  if (e.kind == Expr::Kind::test && !known(std::begin(kTests), std::end(kTests), e.name))
    return Status::error(where(e.line, e.column) + "unknown test '" + e.name + "'");
  for (const auto& a : e.args)
    if (a) DS_TRY(check_expr(*a));
  for (const auto& [k, v] : e.kwargs)
    if (v) DS_TRY(check_expr(*v));
  return Status();
}

Status check_body(const Body& body, bool in_loop) {
  for (const auto& node : body) {
    if (node->expr) DS_TRY(check_expr(*node->expr));
    if (node->filter) DS_TRY(check_expr(*node->filter));
    for (const auto& d : node->defaults)
      if (d) DS_TRY(check_expr(*d));
    for (const auto& [cond, branch] : node->branches) {
      DS_TRY(check_expr(*cond));
      DS_TRY(check_body(branch, in_loop));
    }
    switch (node->kind) {
      case Node::Kind::break_:
      case Node::Kind::continue_:
        if (!in_loop)
          return Status::error(where(node->line, node->column) + "'" + (node->kind == Node::Kind::break_ ? "break" : "continue") +
                               "' outside of a loop");
        break;
      case Node::Kind::for_:
        DS_TRY(check_body(node->body, true));
        DS_TRY(check_body(node->else_body, in_loop));
        break;
      case Node::Kind::macro:
      case Node::Kind::call_block:
        DS_TRY(check_body(node->body, false));
        break;
      default:
        DS_TRY(check_body(node->body, in_loop));
        DS_TRY(check_body(node->else_body, in_loop));
    }
  }
  return Status();
}

}  // namespace
}  // namespace ds::jinja::detail

namespace ds::jinja {

Status check_template(const Program& program) { return detail::check_body(program.body, false); }

}  // namespace ds::jinja
