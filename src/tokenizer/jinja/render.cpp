// Jinja interpreter: a tree walker over the parser's AST with jinja2's scoping (a loop body is a fresh
// scope every iteration, if-blocks are not scopes, macros see the scope they were defined in), Python
// value semantics and the sandbox's limits (range() <= 100,000 items), plus budgets of our own (output
// size, evaluation steps, call depth) so hostile templates end with an error.
#include "tokenizer/jinja/render_internal.h"

#include <algorithm>
#include <memory>

#include "tokenizer/jinja/parser.h"
#include "util/str_cat.h"

namespace ds::jinja::detail {

std::string where(int line, int column) { return str_cat("template line ", line, ", column ", column, ": "); }

Renderer::Renderer(const RenderLimits& limits, std::function<std::string(const std::string&)> clock)
    : limits_(limits), clock_(std::move(clock)) {}

Renderer::~Renderer() {
  for (Value& ns : namespaces_) ns.as_dict().clear();  // breaks reference cycles through namespaces
}

Result<std::string> Renderer::run(const Program& program, const Dict& globals) {
  root_ = std::make_shared<Frame>();
  for (const auto& [k, v] : globals) root_->set(k, v);
  std::string out;
  Flow flow = Flow::normal;
  DS_TRY(render_body(program.body, root_, out, flow));
  return out;
}

Status Renderer::err(const Expr& e, const std::string& message) { return Status::error(where(e.line, e.column) + message); }

Status Renderer::located(const Expr& e, const Status& s) {
  if (s.ok()) return s;
  const std::string& m = s.message();
  if (m.rfind("template line ", 0) == 0 || m.rfind(kRaisedPrefix, 0) == 0 || m.rfind("template: ", 0) == 0) return s;
  return err(e, m);
}

Status Renderer::undefined_error(const Value& v) {
  return Status::error(v.undefined_name().empty() ? std::string("value is undefined") : v.undefined_name());
}

// ------------------------------------------------------------------------------------------ statements

Status Renderer::render_body(const Body& body, const FramePtr& frame, std::string& out, Flow& flow) {
  DepthGuard guard(depth_);
  if (depth_ > 1500) return Status::error("template: rendering nested too deeply");
  for (const auto& node : body) {
    DS_TRY(tick());
    DS_TRY(render_node(*node, frame, out, flow));
    if (flow != Flow::normal) return Status();
  }
  return Status();
}

Status Renderer::render_node(const Node& node, const FramePtr& frame, std::string& out, Flow& flow) {
  switch (node.kind) {
    case Node::Kind::text:
      out += node.text;
      return check_bytes(out.size());
    case Node::Kind::output: {
      DS_ASSIGN_OR_RETURN(Value v, eval(*node.expr, frame));
      DS_ASSIGN_OR_RETURN(std::string s, to_str(v));
      out += s;
      return check_bytes(out.size());
    }
    case Node::Kind::if_: {
      for (const auto& [cond, body] : node.branches) {
        DS_ASSIGN_OR_RETURN(Value c, eval(*cond, frame));
        if (c.truthy()) return render_body(body, frame, out, flow);
      }
      return render_body(node.else_body, frame, out, flow);
    }
    case Node::Kind::for_: return render_for(node, frame, out);
    case Node::Kind::set: {
      DS_ASSIGN_OR_RETURN(Value v, eval(*node.expr, frame));
      if (!node.ns_attr.empty()) {
        const Value* target = frame->lookup(node.targets[0]);
        if (!target || !target->is_namespace())
          return err(*node.expr, "cannot assign attribute on non-namespace object");
        if (!node.ns_attr.empty() && node.ns_attr[0] == '_')
          return err(*node.expr, "Chat templates cannot store underscore-prefixed attributes on a namespace, but got '" +
                                     node.ns_attr + "'. Please rename the attribute.");
        Value ns = *target;
        ns.set(node.ns_attr, std::move(v));
        return Status();
      }
      return assign(node.targets, std::move(v), frame, *node.expr);
    }
    case Node::Kind::set_block: {
      std::string captured;
      Flow inner = Flow::normal;
      auto scope = std::make_shared<Frame>();
      scope->parent = frame;
      DS_TRY(render_body(node.body, scope, captured, inner));
      frame->set(node.targets[0], Value::string(std::move(captured)));
      return Status();
    }
    case Node::Kind::macro:
      frame->set(node.text, make_macro(node, frame, node.text));
      return Status();
    case Node::Kind::call_block: {
      const Expr& call = *node.expr;
      Value caller = make_macro(node, frame, "caller");
      DS_ASSIGN_OR_RETURN(Value callee, eval(*call.args[0], frame));
      if (!callee.is_function()) return err(call, callee.is_undefined() ? undefined_error(callee).message() : "object is not callable");
      CallArgs args;
      DS_TRY(eval_args(call, 1, frame, args));
      args.keyword.emplace_back("caller", caller);
      auto result = callee.as_function()(args);
      if (!result.ok()) return located(call, result.status());
      DS_ASSIGN_OR_RETURN(std::string s, to_str(*result));
      out += s;
      return check_bytes(out.size());
    }
    case Node::Kind::break_: flow = Flow::break_; return Status();
    case Node::Kind::continue_: flow = Flow::continue_; return Status();
  }
  return Status();
}

Status Renderer::assign(const std::vector<std::string>& targets, Value v, const FramePtr& frame, const Expr& at) {
  if (targets.size() == 1) {
    frame->set(targets[0], std::move(v));
    return Status();
  }
  DS_ASSIGN_OR_RETURN(List items, iterate(v, at));
  if (items.size() != targets.size())
    return err(at, items.size() > targets.size() ? str_cat("too many values to unpack (expected ", targets.size(), ")")
                                                 : str_cat("not enough values to unpack (expected ", targets.size(),
                                                           ", got ", items.size(), ")"));
  for (size_t i = 0; i < targets.size(); ++i) frame->set(targets[i], items[i]);
  return Status();
}

Status Renderer::render_for(const Node& node, const FramePtr& frame, std::string& out) {
  DS_ASSIGN_OR_RETURN(Value iterable, eval(*node.expr, frame));
  DS_ASSIGN_OR_RETURN(List all, iterate(iterable, *node.expr));
  List items;
  if (node.filter) {
    for (Value& item : all) {
      DS_TRY(tick());
      auto scope = std::make_shared<Frame>();
      scope->parent = frame;
      DS_TRY(assign(node.targets, item, scope, *node.expr));
      DS_ASSIGN_OR_RETURN(Value keep, eval(*node.filter, scope));
      if (keep.truthy()) items.push_back(std::move(item));
    }
  } else {
    items = std::move(all);
  }
  if (items.empty()) {
    Flow flow = Flow::normal;
    return render_body(node.else_body, frame, out, flow);
  }
  const int64_t n = static_cast<int64_t>(items.size());
  const Value items_value = Value::list(items);
  for (int64_t i = 0; i < n; ++i) {
    auto scope = std::make_shared<Frame>();
    scope->parent = frame;
    DS_TRY(assign(node.targets, items[static_cast<size_t>(i)], scope, *node.expr));
    Dict loop;
    loop.emplace_back("index", Value::integer(i + 1));
    loop.emplace_back("index0", Value::integer(i));
    loop.emplace_back("revindex", Value::integer(n - i));
    loop.emplace_back("revindex0", Value::integer(n - i - 1));
    loop.emplace_back("first", Value::boolean(i == 0));
    loop.emplace_back("last", Value::boolean(i == n - 1));
    loop.emplace_back("length", Value::integer(n));
    loop.emplace_back("depth", Value::integer(1));
    loop.emplace_back("depth0", Value::integer(0));
    loop.emplace_back("previtem", i > 0 ? items[static_cast<size_t>(i - 1)] : Value::undefined("there is no previous item"));
    loop.emplace_back("nextitem", i + 1 < n ? items[static_cast<size_t>(i + 1)] : Value::undefined("there is no next item"));
    loop.emplace_back("cycle", Value::function(
                                   [i](CallArgs& args) -> Result<Value> {
                                     if (args.positional.empty()) return Status::error("no items for cycling given");
                                     return args.positional[static_cast<size_t>(i) % args.positional.size()];
                                   },
                                   "cycle"));
    scope->set("loop", Value::dict(std::move(loop)));
    Flow flow = Flow::normal;
    DS_TRY(render_body(node.body, scope, out, flow));
    if (flow == Flow::break_) break;
  }
  return Status();
}

Value Renderer::make_macro(const Node& node, const FramePtr& frame, const std::string& name) {
  std::weak_ptr<Frame> weak = frame;
  const Node* def = &node;
  return Value::function([this, def, weak, name](CallArgs& args) -> Result<Value> { return call_macro(*def, weak, name, args); },
                         name);
}

Result<Value> Renderer::call_macro(const Node& def, const std::weak_ptr<Frame>& weak, const std::string& /*name*/, CallArgs& args) {
  DepthGuard guard(call_depth_);
  if (call_depth_ > limits_.max_call_depth)
    return Status::errorf("template: macro calls nested more than ", limits_.max_call_depth, " deep (runaway recursion?)");
  auto scope = std::make_shared<Frame>();
  scope->parent = weak.lock();
  if (!scope->parent) scope->parent = root_;
  const size_t nparams = def.targets.size();
  List varargs;
  for (size_t i = 0; i < args.positional.size(); ++i) {
    if (i < nparams) scope->set(def.targets[i], args.positional[i]);
    else varargs.push_back(args.positional[i]);
  }
  Dict kwargs;
  for (auto& [k, v] : args.keyword) {
    const bool is_param = std::find(def.targets.begin(), def.targets.end(), k) != def.targets.end();
    if (is_param || k == "caller") scope->set(k, v);
    else kwargs.emplace_back(k, v);
  }
  for (size_t i = 0; i < nparams; ++i) {
    bool bound = i < args.positional.size();
    for (const auto& [k, v] : args.keyword) bound = bound || k == def.targets[i];
    if (bound) continue;
    if (i < def.defaults.size() && def.defaults[i]) {
      DS_ASSIGN_OR_RETURN(Value d, eval(*def.defaults[i], scope));
      scope->set(def.targets[i], std::move(d));
    } else {
      scope->set(def.targets[i], Value::undefined("parameter '" + def.targets[i] + "' was not provided"));
    }
  }
  scope->set("varargs", Value::list(std::move(varargs)));
  scope->set("kwargs", Value::dict(std::move(kwargs)));
  std::string out;
  Flow flow = Flow::normal;
  DS_TRY(render_body(def.body, scope, out, flow));
  return Value::string(std::move(out));
}

}  // namespace ds::jinja::detail

namespace ds::jinja {

Result<std::string> render_template(const Program& program, const Dict& globals, const RenderLimits& limits,
                                    std::function<std::string(const std::string&)> strftime_now) {
  detail::Renderer renderer(limits, std::move(strftime_now));
  return renderer.run(program, globals);
}

Result<std::string> render_template_source(std::string_view source, const Dict& globals, const RenderLimits& limits) {
  DS_ASSIGN_OR_RETURN(Program program, parse_template(source));
  DS_TRY(check_template(program));
  return render_template(program, globals, limits);
}

}  // namespace ds::jinja
