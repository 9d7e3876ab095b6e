// Jinja interpreter: a tree walker over the parser's AST with jinja2's scoping (a loop body is a fresh
// scope every iteration, if-blocks are not scopes, macros see the scope they were defined in), Python
// value semantics and the sandbox's limits (range() <= 100,000 items), plus budgets of our own (output
// size, evaluation steps, call depth) so hostile templates end with an error.
#include "tokenizer/jinja/render.h"

#include <utf8proc.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <ctime>
#include <memory>

#include "tokenizer/jinja/parser.h"
#include "tokenizer/utf8.h"
#include "util/str_cat.h"

namespace ds::jinja {
namespace {

// ---------------------------------------------------------------------------------------------------------
// Text helpers (Python str semantics on UTF-8: indices and lengths count code points).

std::u32string to_u32(const std::string& s) {
  std::u32string out;
  for (size_t pos = 0; pos < s.size();) out += utf8::decode(s, pos);
  return out;
}

std::string from_u32(std::u32string_view s) {
  std::string out;
  for (char32_t c : s) utf8::append(out, c);
  return out;
}

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool py_isspace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

char32_t to_upper(char32_t c) { return static_cast<char32_t>(utf8proc_toupper(static_cast<utf8proc_int32_t>(c))); }
char32_t to_lower(char32_t c) { return static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))); }
bool is_cased_letter(char32_t c) { return to_upper(c) != c || to_lower(c) != c; }

std::string map_case(const std::string& s, bool upper) {
  std::string out;
  for (size_t pos = 0; pos < s.size();) {
    const char32_t c = utf8::decode(s, pos);
    if (upper && c == U'ß') {
      out += "SS";
      continue;
    }
    utf8::append(out, upper ? to_upper(c) : to_lower(c));
  }
  return out;
}

std::string py_strip(const std::string& s, const Value* chars, bool left, bool right) {
  const std::u32string u = to_u32(s);
  std::u32string set;
  const bool custom = chars && chars->is_string();
  if (custom) set = to_u32(chars->as_string());
  auto strip = [&](char32_t c) { return custom ? set.find(c) != std::u32string::npos : py_isspace(c); };
  size_t b = 0, e = u.size();
  if (left) while (b < e && strip(u[b])) ++b;
  if (right) while (e > b && strip(u[e - 1])) --e;
  return from_u32(std::u32string_view(u).substr(b, e - b));
}

std::string py_replace(const std::string& s, const std::string& old, const std::string& with, int64_t count) {
  std::string out;
  if (old.empty()) {  // Python inserts `with` before every code point and at the end
    int64_t done = 0;
    size_t pos = 0;
    while (pos <= s.size()) {
      if (count >= 0 && done >= count) {
        out.append(s, pos, std::string::npos);
        break;
      }
      out += with;
      ++done;
      if (pos == s.size()) break;
      const size_t start = pos;
      utf8::decode(s, pos);
      out.append(s, start, pos - start);
    }
    return out;
  }
  size_t pos = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    const size_t hit = s.find(old, pos);
    if (hit == std::string::npos) break;
    out.append(s, pos, hit - pos);
    out += with;
    pos = hit + old.size();
    ++done;
  }
  out.append(s, pos, std::string::npos);
  return out;
}

// str.splitlines() (no keepends).
std::vector<std::string> py_splitlines(const std::string& s) {
  std::vector<std::string> lines;
  std::string current;
  bool pending = false;
  for (size_t pos = 0; pos < s.size();) {
    const size_t start = pos;
    const char32_t c = utf8::decode(s, pos);
    const bool is_break = c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E ||
                          c == 0x85 || c == 0x2028 || c == 0x2029;
    if (is_break) {
      if (c == '\r' && pos < s.size() && s[pos] == '\n') ++pos;
      lines.push_back(std::move(current));
      current.clear();
      pending = false;
    } else {
      current.append(s, start, pos - start);
      pending = true;
    }
  }
  if (pending) lines.push_back(std::move(current));
  return lines;
}

// Python slice indices (slice.indices).
void slice_indices(int64_t length, const Value& start_v, const Value& stop_v, int64_t step, int64_t& start, int64_t& stop) {
  auto clamp = [&](const Value& v, int64_t def_pos, int64_t def_neg) -> int64_t {
    if (v.is_none() || v.is_undefined()) return step > 0 ? def_pos : def_neg;
    int64_t i = v.as_int();
    if (i < 0) {
      i += length;
      if (i < 0) i = step < 0 ? -1 : 0;
    } else if (i >= length) {
      i = step < 0 ? length - 1 : length;
    }
    return i;
  };
  start = clamp(start_v, 0, length - 1);
  stop = clamp(stop_v, length, -1);
}

// ---------------------------------------------------------------------------------------------------------

struct Frame;
using FramePtr = std::shared_ptr<Frame>;
struct Frame {
  std::vector<std::pair<std::string, Value>> vars;
  FramePtr parent;
  const Value* lookup(const std::string& name) const {
    for (const Frame* f = this; f; f = f->parent.get())
      for (const auto& [k, v] : f->vars)
        if (k == name) return &v;
    return nullptr;
  }
  void set(const std::string& name, Value value) {
    for (auto& [k, v] : vars) {
      if (k == name) {
        v = std::move(value);
        return;
      }
    }
    vars.emplace_back(name, std::move(value));
  }
};

enum class Flow { normal, break_, continue_ };

const char* const kFilters[] = {"tojson", "string", "length", "count", "trim", "upper", "lower", "join", "items", "list",
                                "first", "last", "default", "d", "safe", "replace", "indent", "capitalize", "title",
                                "abs", "int", "float", "reverse", "sort", "unique", "min", "max", "sum", "map", "select",
                                "reject", "selectattr", "rejectattr", "e", "escape", "round", "wordcount", "center",
                                "dictsort", "batch", "attr"};
const char* const kTests[] = {"defined", "undefined", "none", "string", "number", "integer", "float", "boolean",
                              "mapping", "iterable", "sequence", "true", "false", "callable", "odd", "even",
                              "divisibleby", "eq", "equalto", "==", "ne", "!=", "lt", "<", "lessthan", "gt", ">",
                              "greaterthan", "le", "<=", "ge", ">=", "in", "lower", "upper", "sameas", "escaped"};

bool known(const char* const* begin, const char* const* end, const std::string& name) {
  return std::any_of(begin, end, [&](const char* n) { return name == n; });
}

std::string where(int line, int column) { return str_cat("template line ", line, ", column ", column, ": "); }

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

std::string object_name(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::dict: return "dict object";
    case Value::Kind::list: return "list object";
    case Value::Kind::string: return "str object";
    case Value::Kind::namespace_: return "Namespace object";
    case Value::Kind::none: return "None";
    default: return v.type_name() + " object";
  }
}

// Rough byte size of a value's str()/tojson(), stopping once it passes `cap` (namespaces count as small).
size_t approx_size(const Value& v, size_t cap) {
  switch (v.kind()) {
    case Value::Kind::string: return v.as_string().size() * 2 + 2;
    case Value::Kind::list: {
      size_t n = 2;
      for (const Value& item : v.as_list()) {
        n += approx_size(item, cap) + 2;
        if (n > cap) return n;
      }
      return n;
    }
    case Value::Kind::dict: {
      size_t n = 2;
      for (const auto& [k, item] : v.as_dict()) {
        n += k.size() * 2 + 6 + approx_size(item, cap);
        if (n > cap) return n;
      }
      return n;
    }
    default: return 32;
  }
}

int nesting(const Value& v, int cap) {
  if (cap <= 0) return 1;
  int depth = 0;
  if (v.is_list())
    for (const Value& item : v.as_list()) depth = std::max(depth, nesting(item, cap - 1));
  else if (v.is_dict())
    for (const auto& [k, item] : v.as_dict()) depth = std::max(depth, nesting(item, cap - 1));
  else
    return 0;
  return depth + 1;
}

class Renderer {
 public:
  Renderer(const RenderLimits& limits, std::function<std::string(const std::string&)> clock)
      : limits_(limits), clock_(std::move(clock)) {}
  ~Renderer() {
    for (Value& ns : namespaces_) ns.as_dict().clear();  // breaks reference cycles through namespaces
  }

  Result<std::string> run(const Program& program, const Dict& globals) {
    root_ = std::make_shared<Frame>();
    for (const auto& [k, v] : globals) root_->set(k, v);
    std::string out;
    Flow flow = Flow::normal;
    DS_TRY(render_body(program.body, root_, out, flow));
    return out;
  }

 private:
  const RenderLimits& limits_;
  std::function<std::string(const std::string&)> clock_;
  FramePtr root_;
  uint64_t steps_ = 0;
  int depth_ = 0;       // C++ recursion (bodies, macro calls)
  int call_depth_ = 0;  // macro calls
  std::vector<Value> namespaces_;

  struct DepthGuard {
    int& d;
    explicit DepthGuard(int& depth) : d(depth) { ++d; }
    ~DepthGuard() { --d; }
  };

  static Status err(const Expr& e, const std::string& message) { return Status::error(where(e.line, e.column) + message); }
  static Status located(const Expr& e, const Status& s) {
    if (s.ok()) return s;
    const std::string& m = s.message();
    if (m.rfind("template line ", 0) == 0 || m.rfind(kRaisedPrefix, 0) == 0 || m.rfind("template: ", 0) == 0) return s;
    return err(e, m);
  }
  Status tick() {
    if (++steps_ > limits_.max_steps)
      return Status::errorf("template: rendering stopped after ", limits_.max_steps, " evaluation steps (runaway template?)");
    return Status();
  }
  Status check_bytes(size_t n) const {
    if (n > limits_.max_output_bytes)
      return Status::errorf("template: expected output and values of at most ", limits_.max_output_bytes,
                            " bytes, found a larger one (runaway template?)");
    return Status();
  }
  Result<Value> make_string(std::string s) const {
    DS_TRY(check_bytes(s.size()));
    return Value::string(std::move(s));
  }
  Result<Value> make_list(List items) const {
    DS_TRY(check_bytes(items.size() * 16));
    Value v = Value::list(std::move(items));
    if (nesting(v, 130) > 128) return Status::error("template: values nested more than 128 deep");
    return v;
  }
  Result<std::string> to_str(const Value& v) const {
    if (!v.is_string()) DS_TRY(check_bytes(approx_size(v, limits_.max_output_bytes + 1)));
    return py_str(v);
  }
  static Status undefined_error(const Value& v) {
    return Status::error(v.undefined_name().empty() ? std::string("value is undefined") : v.undefined_name());
  }

  // ------------------------------------------------------------------------------------------ statements

  Status render_body(const Body& body, const FramePtr& frame, std::string& out, Flow& flow) {
    DepthGuard guard(depth_);
    if (depth_ > 1500) return Status::error("template: rendering nested too deeply");
    for (const auto& node : body) {
      DS_TRY(tick());
      DS_TRY(render_node(*node, frame, out, flow));
      if (flow != Flow::normal) return Status();
    }
    return Status();
  }

  Status render_node(const Node& node, const FramePtr& frame, std::string& out, Flow& flow) {
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

  Status assign(const std::vector<std::string>& targets, Value v, const FramePtr& frame, const Expr& at) {
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

  Status render_for(const Node& node, const FramePtr& frame, std::string& out) {
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

  Value make_macro(const Node& node, const FramePtr& frame, const std::string& name) {
    std::weak_ptr<Frame> weak = frame;
    const Node* def = &node;
    return Value::function([this, def, weak, name](CallArgs& args) -> Result<Value> { return call_macro(*def, weak, name, args); },
                           name);
  }

  Result<Value> call_macro(const Node& def, const std::weak_ptr<Frame>& weak, const std::string& /*name*/, CallArgs& args) {
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

  // ----------------------------------------------------------------------------------------- expressions

  // Python iteration: list items, dict keys, string code points; undefined iterates as empty.
  Result<List> iterate(const Value& v, const Expr& at) {
    switch (v.kind()) {
      case Value::Kind::undefined: return List{};
      case Value::Kind::list: return v.as_list();
      case Value::Kind::dict: {
        List keys;
        for (const auto& [k, item] : v.as_dict()) keys.push_back(Value::string(k));
        return keys;
      }
      case Value::Kind::string: {
        List chars;
        const std::string& s = v.as_string();
        for (size_t pos = 0; pos < s.size();) {
          const size_t start = pos;
          utf8::decode(s, pos);
          chars.push_back(Value::string(s.substr(start, pos - start)));
        }
        return chars;
      }
      default: return err(at, "'" + v.type_name() + "' object is not iterable");
    }
  }

  Status eval_args(const Expr& e, size_t first, const FramePtr& frame, CallArgs& args) {
    for (size_t i = first; i < e.args.size(); ++i) {
      DS_ASSIGN_OR_RETURN(Value v, eval(*e.args[i], frame));
      args.positional.push_back(std::move(v));
    }
    for (const auto& [k, expr] : e.kwargs) {
      DS_ASSIGN_OR_RETURN(Value v, eval(*expr, frame));
      args.keyword.emplace_back(k, std::move(v));
    }
    return Status();
  }

  Result<Value> eval(const Expr& e, const FramePtr& frame) {
    DS_TRY(tick());
    auto result = eval_inner(e, frame);
    if (!result.ok()) return located(e, result.status());
    return result;
  }

  Result<Value> lookup_name(const std::string& name, const FramePtr& frame) {
    if (const Value* v = frame->lookup(name)) return *v;
    if (name == "range") return Value::function([](CallArgs& a) { return builtin_range(a); }, "range");
    if (name == "namespace")
      return Value::function(
          [this](CallArgs& a) -> Result<Value> {
            Dict items;
            if (!a.positional.empty()) {
              if (!a.positional[0].is_dict()) return Status::error("namespace() expects a mapping as positional argument");
              items = a.positional[0].as_dict();
            }
            for (auto& [k, v] : a.keyword) {
              bool replaced = false;
              for (auto& [k2, v2] : items) if (k2 == k) { v2 = v; replaced = true; }
              if (!replaced) items.emplace_back(k, v);
            }
            for (const auto& [k, v] : items)
              if (!k.empty() && k[0] == '_')
                return Status::error("Chat templates cannot store underscore-prefixed attributes on a namespace, but got '" + k +
                                     "'. Please rename the attribute.");
            Value ns = Value::make_namespace(std::move(items));
            namespaces_.push_back(ns);
            return ns;
          },
          "namespace");
    if (name == "dict")
      return Value::function(
          [](CallArgs& a) -> Result<Value> {
            Dict items;
            if (!a.positional.empty()) {
              if (!a.positional[0].is_dict()) return Status::error("dict() expects a mapping as positional argument");
              items = a.positional[0].as_dict();
            }
            Value d = Value::dict(std::move(items));
            for (auto& [k, v] : a.keyword) d.set(k, v);
            return d;
          },
          "dict");
    if (name == "raise_exception")
      return Value::function(
          [](CallArgs& a) -> Result<Value> {
            const Value* m = a.get(0, "message");
            return Status::error(std::string(kRaisedPrefix) + (m ? py_str(*m) : std::string()));
          },
          "raise_exception");
    if (name == "strftime_now")
      return Value::function(
          [this](CallArgs& a) -> Result<Value> {
            const Value* f = a.get(0, "format");
            if (!f || !f->is_string()) return Status::error("strftime_now() expects a format string");
            if (clock_) return Value::string(clock_(f->as_string()));
            const std::time_t now = std::time(nullptr);
            std::tm tm{};
            localtime_r(&now, &tm);
            char buffer[512];
            const size_t n = std::strftime(buffer, sizeof buffer, f->as_string().c_str(), &tm);
            return Value::string(std::string(buffer, n));
          },
          "strftime_now");
    return Value::undefined("'" + name + "' is undefined");
  }

  static Result<Value> builtin_range(CallArgs& a) {
    int64_t start = 0, stop = 0, step = 1;
    for (const Value& v : a.positional)
      if (!v.is_int() && !v.is_bool()) return Status::errorf("'", v.type_name(), "' object cannot be interpreted as an integer");
    if (a.positional.size() == 1) {
      stop = a.positional[0].as_int();
    } else if (a.positional.size() == 2 || a.positional.size() == 3) {
      start = a.positional[0].as_int();
      stop = a.positional[1].as_int();
      if (a.positional.size() == 3) step = a.positional[2].as_int();
    } else {
      return Status::error("range expected 1 to 3 arguments");
    }
    if (step == 0) return Status::error("range() arg 3 must not be zero");
    const double count = std::max(0.0, std::ceil((static_cast<double>(stop) - static_cast<double>(start)) / static_cast<double>(step)));
    if (count > 100000) return Status::error("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
    List items;
    for (int64_t i = 0; i < static_cast<int64_t>(count); ++i) items.push_back(Value::integer(start + i * step));
    return Value::list(std::move(items));
  }

  // getattr as jinja2 does it: the attribute (methods), then the item.
  Result<Value> get_attr(const Value& obj, const std::string& name) {
    if (obj.is_undefined()) return undefined_error(obj);
    if (obj.is_dict()) {
      if (Value m = method(obj, name); m.is_function()) return m;
      if (const Value* v = obj.find(name)) return *v;
    } else if (obj.is_namespace()) {
      if (const Value* v = obj.find(name)) return *v;
    } else if (Value m = method(obj, name); m.is_function()) {
      return m;
    }
    return Value::undefined("'" + object_name(obj) + "' has no attribute '" + name + "'");
  }

  Result<Value> get_item(const Value& obj, const Value& key) {
    if (obj.is_undefined()) return undefined_error(obj);
    if (obj.is_dict() && key.is_string()) {
      if (const Value* v = obj.find(key.as_string())) return *v;
      if (Value m = method(obj, key.as_string()); m.is_function()) return m;
    } else if ((obj.is_list() || obj.is_string()) && (key.is_int() || key.is_bool())) {
      if (obj.is_list()) {
        const int64_t n = static_cast<int64_t>(obj.as_list().size());
        int64_t i = key.as_int();
        if (i < 0) i += n;
        if (i >= 0 && i < n) return obj.as_list()[static_cast<size_t>(i)];
      } else {
        const std::u32string u = to_u32(obj.as_string());
        const int64_t n = static_cast<int64_t>(u.size());
        int64_t i = key.as_int();
        if (i < 0) i += n;
        if (i >= 0 && i < n) return Value::string(from_u32(std::u32string_view(u).substr(static_cast<size_t>(i), 1)));
      }
    } else if (key.is_string()) {
      return get_attr(obj, key.as_string());
    } else if (obj.is_namespace()) {
      return Value::undefined("'" + object_name(obj) + "' has no attribute '" + py_str(key) + "'");
    }
    return Value::undefined("'" + object_name(obj) + "' has no attribute '" + py_str(key) + "'");
  }

  // Bound methods of str, dict and list (the sandbox blocks the ones that modify).
  Value method(const Value& obj, const std::string& name) {
    auto bind = [&](auto fn) { return Value::function([obj, fn](CallArgs& a) -> Result<Value> { return fn(obj, a); }, name); };
    if (obj.is_string()) {
      if (name == "startswith" || name == "endswith") {
        const bool starts = name == "startswith";
        return bind([starts](const Value& self, CallArgs& a) -> Result<Value> {
          const Value* p = a.get(0, "prefix");
          if (!p) return Status::error(std::string(starts ? "startswith" : "endswith") + "() takes at least 1 argument (0 given)");
          List options = p->is_list() ? p->as_list() : List{*p};
          const std::string& s = self.as_string();
          for (const Value& o : options) {
            if (!o.is_string())
              return Status::errorf(starts ? "startswith" : "endswith", " first arg must be str or a tuple of str, not ", o.type_name());
            const std::string& x = o.as_string();
            if (x.size() <= s.size() && (starts ? s.compare(0, x.size(), x) == 0 : s.compare(s.size() - x.size(), x.size(), x) == 0))
              return Value::boolean(true);
          }
          return Value::boolean(false);
        });
      }
      if (name == "strip" || name == "lstrip" || name == "rstrip") {
        const bool left = name != "rstrip", right = name != "lstrip";
        return bind([left, right](const Value& self, CallArgs& a) -> Result<Value> {
          const Value* chars = a.get(0, "chars");
          if (chars && !chars->is_string() && !chars->is_none()) return Status::error("strip arg must be None or str");
          return Value::string(py_strip(self.as_string(), chars, left, right));
        });
      }
      if (name == "split" || name == "rsplit") {
        const bool from_right = name == "rsplit";
        return bind([this, from_right](const Value& self, CallArgs& a) -> Result<Value> {
          const Value* sep = a.get(0, "sep");
          const Value* maxv = a.get(1, "maxsplit");
          int64_t maxsplit = maxv && (maxv->is_int() || maxv->is_bool()) ? maxv->as_int() : -1;
          return split(self.as_string(), sep && !sep->is_none() ? sep : nullptr, maxsplit, from_right);
        });
      }
      if (name == "replace")
        return bind([this](const Value& self, CallArgs& a) -> Result<Value> {
          const Value* old = a.get(0, "old");
          const Value* with = a.get(1, "new");
          const Value* count = a.get(2, "count");
          if (!old || !with || !old->is_string() || !with->is_string()) return Status::error("replace() expects two strings");
          return make_string(py_replace(self.as_string(), old->as_string(), with->as_string(),
                                        count && count->is_int() ? count->as_int() : -1));
        });
      if (name == "upper" || name == "lower") {
        const bool upper = name == "upper";
        return bind([upper](const Value& self, CallArgs&) -> Result<Value> { return Value::string(map_case(self.as_string(), upper)); });
      }
      if (name == "capitalize" || name == "title") {
        const bool title = name == "title";
        return bind([title](const Value& self, CallArgs&) -> Result<Value> { return Value::string(recase(self.as_string(), title)); });
      }
      if (name == "find" || name == "count")
        return bind([name](const Value& self, CallArgs& a) -> Result<Value> {
          const Value* sub = a.get(0, "sub");
          if (!sub || !sub->is_string()) return Status::errorf(name, "() expects a string");
          const std::string& s = self.as_string();
          const std::string& x = sub->as_string();
          if (name == "find") {
            const size_t hit = s.find(x);
            return Value::integer(hit == std::string::npos ? -1 : static_cast<int64_t>(code_points(s.substr(0, hit))));
          }
          if (x.empty()) return Value::integer(static_cast<int64_t>(code_points(s) + 1));
          int64_t n = 0;
          for (size_t pos = s.find(x); pos != std::string::npos; pos = s.find(x, pos + x.size())) ++n;
          return Value::integer(n);
        });
      if (name == "join")
        return bind([this](const Value& self, CallArgs& a) -> Result<Value> {
          const Value* items = a.get(0, "iterable");
          if (!items) return Status::error("join() takes exactly one argument");
          Expr dummy;
          DS_ASSIGN_OR_RETURN(List list, iterate(*items, dummy));
          std::string out;
          for (size_t i = 0; i < list.size(); ++i) {
            if (!list[i].is_string()) return Status::errorf("sequence item ", i, ": expected str instance, ", list[i].type_name(), " found");
            if (i) out += self.as_string();
            out += list[i].as_string();
            DS_TRY(check_bytes(out.size()));
          }
          return Value::string(std::move(out));
        });
      if (name == "isdigit" || name == "isspace" || name == "isalpha" || name == "isupper" || name == "islower")
        return bind([name](const Value& self, CallArgs&) -> Result<Value> {
          const std::u32string u = to_u32(self.as_string());
          if (u.empty()) return Value::boolean(false);
          if (name == "isspace") return Value::boolean(std::all_of(u.begin(), u.end(), py_isspace));
          if (name == "isdigit") return Value::boolean(std::all_of(u.begin(), u.end(), [](char32_t c) { return c >= '0' && c <= '9'; }));
          if (name == "isalpha")
            return Value::boolean(std::all_of(u.begin(), u.end(), [](char32_t c) {
              const auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
              return cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO;
            }));
          const bool upper = name == "isupper";
          bool cased = false;
          for (char32_t c : u) {
            if (!is_cased_letter(c)) continue;
            cased = true;
            if (upper ? to_upper(c) != c : to_lower(c) != c) return Value::boolean(false);
          }
          return Value::boolean(cased);
        });
    } else if (obj.is_dict()) {
      if (name == "get")
        return bind([](const Value& self, CallArgs& a) -> Result<Value> {
          const Value* key = a.get(0, "key");
          if (!key) return Status::error("get expected at least 1 argument, got 0");
          if (key->is_string())
            if (const Value* v = self.find(key->as_string())) return *v;
          const Value* d = a.get(1, "default");
          return d ? *d : Value::none();
        });
      if (name == "items" || name == "keys" || name == "values") {
        const int which = name == "items" ? 0 : name == "keys" ? 1 : 2;
        return bind([which](const Value& self, CallArgs&) -> Result<Value> { return dict_view(self, which); });
      }
    } else if (obj.is_list()) {
      if (name == "index" || name == "count")
        return bind([name](const Value& self, CallArgs& a) -> Result<Value> {
          const Value* x = a.get(0, "value");
          if (!x) return Status::errorf(name, "() takes exactly one argument");
          int64_t n = 0;
          for (size_t i = 0; i < self.as_list().size(); ++i) {
            if (!py_equal(self.as_list()[i], *x)) continue;
            if (name == "index") return Value::integer(static_cast<int64_t>(i));
            ++n;
          }
          if (name == "index") return Status::error("value is not in list");
          return Value::integer(n);
        });
    }
    return Value();
  }

  static Value dict_view(const Value& self, int which) {
    List out;
    for (const auto& [k, v] : self.as_dict()) {
      if (which == 0) out.push_back(Value::list({Value::string(k), v}));
      else if (which == 1) out.push_back(Value::string(k));
      else out.push_back(v);
    }
    return Value::list(std::move(out));
  }

  static std::string recase(const std::string& s, bool title) {
    std::string out;
    bool previous_cased = false;
    bool first = true;
    for (size_t pos = 0; pos < s.size();) {
      const char32_t c = utf8::decode(s, pos);
      char32_t mapped;
      if (title) mapped = previous_cased ? to_lower(c) : to_upper(c);
      else mapped = first ? to_upper(c) : to_lower(c);
      utf8::append(out, mapped);
      previous_cased = is_cased_letter(c);
      first = false;
    }
    return out;
  }

  Result<Value> split(const std::string& s, const Value* sep, int64_t maxsplit, bool from_right) {
    List parts;
    if (!sep) {
      const std::u32string u = to_u32(s);
      if (!from_right) {
        size_t i = 0;
        int64_t splits = 0;
        while (i < u.size()) {
          while (i < u.size() && py_isspace(u[i])) ++i;
          if (i >= u.size()) break;
          if (maxsplit >= 0 && splits >= maxsplit) {
            size_t e = u.size();
            while (e > i && py_isspace(u[e - 1])) --e;
            parts.push_back(Value::string(from_u32(std::u32string_view(u).substr(i, e - i))));
            break;
          }
          size_t j = i;
          while (j < u.size() && !py_isspace(u[j])) ++j;
          parts.push_back(Value::string(from_u32(std::u32string_view(u).substr(i, j - i))));
          ++splits;
          i = j;
        }
      } else {
        size_t i = u.size();
        int64_t splits = 0;
        while (i > 0) {
          while (i > 0 && py_isspace(u[i - 1])) --i;
          if (i == 0) break;
          if (maxsplit >= 0 && splits >= maxsplit) {
            size_t b = 0;
            while (b < i && py_isspace(u[b])) ++b;
            parts.insert(parts.begin(), Value::string(from_u32(std::u32string_view(u).substr(b, i - b))));
            break;
          }
          size_t j = i;
          while (j > 0 && !py_isspace(u[j - 1])) --j;
          parts.insert(parts.begin(), Value::string(from_u32(std::u32string_view(u).substr(j, i - j))));
          ++splits;
          i = j;
        }
      }
      return make_list(std::move(parts));
    }
    if (!sep->is_string()) return Status::errorf("must be str or None, not ", sep->type_name());
    const std::string& x = sep->as_string();
    if (x.empty()) return Status::error("empty separator");
    if (!from_right) {
      size_t pos = 0;
      int64_t splits = 0;
      while (maxsplit < 0 || splits < maxsplit) {
        const size_t hit = s.find(x, pos);
        if (hit == std::string::npos) break;
        parts.push_back(Value::string(s.substr(pos, hit - pos)));
        pos = hit + x.size();
        ++splits;
        DS_TRY(check_bytes(parts.size() * 16));
      }
      parts.push_back(Value::string(s.substr(pos)));
    } else {
      size_t end = s.size();
      int64_t splits = 0;
      while (maxsplit < 0 || splits < maxsplit) {
        if (end < x.size()) break;
        const size_t hit = s.rfind(x, end - x.size());
        if (hit == std::string::npos) break;
        parts.insert(parts.begin(), Value::string(s.substr(hit + x.size(), end - hit - x.size())));
        end = hit;
        ++splits;
        DS_TRY(check_bytes(parts.size() * 16));
      }
      parts.insert(parts.begin(), Value::string(s.substr(0, end)));
    }
    return make_list(std::move(parts));
  }

  Result<Value> eval_inner(const Expr& e, const FramePtr& frame) {
    switch (e.kind) {
      case Expr::Kind::literal: return e.value;
      case Expr::Kind::name: return lookup_name(e.name, frame);
      case Expr::Kind::get_attr: {
        DS_ASSIGN_OR_RETURN(Value obj, eval(*e.args[0], frame));
        return get_attr(obj, e.name);
      }
      case Expr::Kind::get_item: {
        DS_ASSIGN_OR_RETURN(Value obj, eval(*e.args[0], frame));
        DS_ASSIGN_OR_RETURN(Value key, eval(*e.args[1], frame));
        if (key.is_undefined()) return undefined_error(key);
        return get_item(obj, key);
      }
      case Expr::Kind::slice: return eval_slice(e, frame);
      case Expr::Kind::call: {
        DS_ASSIGN_OR_RETURN(Value callee, eval(*e.args[0], frame));
        if (callee.is_undefined()) return undefined_error(callee);
        if (!callee.is_function()) return Status::errorf("'", callee.type_name(), "' object is not callable");
        CallArgs args;
        DS_TRY(eval_args(e, 1, frame, args));
        return callee.as_function()(args);
      }
      case Expr::Kind::filter: {
        DS_ASSIGN_OR_RETURN(Value v, eval(*e.args[0], frame));
        CallArgs args;
        DS_TRY(eval_args(e, 1, frame, args));
        return apply_filter(e.name, v, args, e);
      }
      case Expr::Kind::test: {
        DS_ASSIGN_OR_RETURN(Value v, eval(*e.args[0], frame));
        CallArgs args;
        DS_TRY(eval_args(e, 1, frame, args));
        DS_ASSIGN_OR_RETURN(bool r, apply_test(e.name, v, args));
        return Value::boolean(r != e.negated);
      }
      case Expr::Kind::neg:
      case Expr::Kind::pos: {
        DS_ASSIGN_OR_RETURN(Value v, eval(*e.args[0], frame));
        if (v.is_undefined()) return undefined_error(v);
        if (!v.is_number()) return Status::errorf("bad operand type for unary ", e.kind == Expr::Kind::neg ? "-" : "+", ": '", v.type_name(), "'");
        if (e.kind == Expr::Kind::pos) return v.is_bool() ? Value::integer(v.as_int()) : v;
        if (v.is_float()) return Value::floating(-v.as_double());
        if (v.as_int() == INT64_MIN) return Status::error("integer overflow");
        return Value::integer(-v.as_int());
      }
      case Expr::Kind::not_: {
        DS_ASSIGN_OR_RETURN(Value v, eval(*e.args[0], frame));
        return Value::boolean(!v.truthy());
      }
      case Expr::Kind::and_: {
        DS_ASSIGN_OR_RETURN(Value a, eval(*e.args[0], frame));
        if (!a.truthy()) return a;
        return eval(*e.args[1], frame);
      }
      case Expr::Kind::or_: {
        DS_ASSIGN_OR_RETURN(Value a, eval(*e.args[0], frame));
        if (a.truthy()) return a;
        return eval(*e.args[1], frame);
      }
      case Expr::Kind::binary: {
        DS_ASSIGN_OR_RETURN(Value a, eval(*e.args[0], frame));
        DS_ASSIGN_OR_RETURN(Value b, eval(*e.args[1], frame));
        return binary(e.name, a, b);
      }
      case Expr::Kind::compare: {
        DS_ASSIGN_OR_RETURN(Value left, eval(*e.args[0], frame));
        for (size_t i = 0; i < e.ops.size(); ++i) {
          DS_ASSIGN_OR_RETURN(Value right, eval(*e.args[i + 1], frame));
          DS_ASSIGN_OR_RETURN(bool r, compare(e.ops[i], left, right));
          if (!r) return Value::boolean(false);
          left = std::move(right);
        }
        return Value::boolean(true);
      }
      case Expr::Kind::cond: {
        DS_ASSIGN_OR_RETURN(Value c, eval(*e.args[1], frame));
        if (c.truthy()) return eval(*e.args[0], frame);
        if (e.args.size() > 2) return eval(*e.args[2], frame);
        return Value::undefined("the inline if-expression on line " + std::to_string(e.line) +
                                " evaluated to false and no else section was defined.");
      }
      case Expr::Kind::list:
      case Expr::Kind::tuple: {
        List items;
        for (const auto& a : e.args) {
          DS_ASSIGN_OR_RETURN(Value v, eval(*a, frame));
          items.push_back(std::move(v));
        }
        return make_list(std::move(items));
      }
      case Expr::Kind::dict: {
        Value d = Value::dict({});
        for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
          DS_ASSIGN_OR_RETURN(Value k, eval(*e.args[i], frame));
          DS_ASSIGN_OR_RETURN(Value v, eval(*e.args[i + 1], frame));
          if (!k.is_string()) return err(*e.args[i], "dict keys must be strings in this implementation, found " + k.type_name());
          d.set(k.as_string(), std::move(v));
        }
        DS_TRY(check_bytes(d.as_dict().size() * 32));
        if (nesting(d, 130) > 128) return Status::error("template: values nested more than 128 deep");
        return d;
      }
    }
    return Status::error("unsupported expression");
  }

  Result<Value> eval_slice(const Expr& e, const FramePtr& frame) {
    DS_ASSIGN_OR_RETURN(Value obj, eval(*e.args[0], frame));
    Value parts[3] = {Value::none(), Value::none(), Value::none()};
    for (int k = 0; k < 3; ++k) {
      if (!e.has[k]) continue;
      DS_ASSIGN_OR_RETURN(parts[k], eval(*e.args[static_cast<size_t>(k) + 1], frame));
      if (!parts[k].is_none() && !parts[k].is_int() && !parts[k].is_bool())
        return Status::error("slice indices must be integers or None");
    }
    if (obj.is_undefined()) return undefined_error(obj);
    const int64_t step = parts[2].is_none() ? 1 : parts[2].as_int();
    if (step == 0) return Status::error("slice step cannot be zero");
    auto pick = [&](int64_t length, auto&& take) {
      int64_t start, stop;
      slice_indices(length, parts[0], parts[1], step, start, stop);
      for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) take(static_cast<size_t>(i));
    };
    if (obj.is_list()) {
      List out;
      pick(static_cast<int64_t>(obj.as_list().size()), [&](size_t i) { out.push_back(obj.as_list()[i]); });
      return Value::list(std::move(out));
    }
    if (obj.is_string()) {
      const std::u32string u = to_u32(obj.as_string());
      std::u32string out;
      pick(static_cast<int64_t>(u.size()), [&](size_t i) { out += u[i]; });
      return Value::string(from_u32(out));
    }
    return Status::errorf("'", obj.type_name(), "' object is not subscriptable");
  }

  // --------------------------------------------------------------------------------------- operators

  static Result<Value> int_result(bool overflow, int64_t r) {
    if (overflow) return Status::error("integer overflow (deltaserve's integers are 64-bit)");
    return Value::integer(r);
  }

  Result<Value> binary(const std::string& op, const Value& a, const Value& b) {
    if (op == "~") {
      DS_ASSIGN_OR_RETURN(std::string x, to_str(a));
      DS_ASSIGN_OR_RETURN(std::string y, to_str(b));
      DS_TRY(check_bytes(x.size() + y.size()));
      return Value::string(x + y);
    }
    if (a.is_undefined()) return undefined_error(a);
    if (b.is_undefined()) return undefined_error(b);
    const bool ints = (a.is_int() || a.is_bool()) && (b.is_int() || b.is_bool());
    const bool nums = a.is_number() && b.is_number();
    auto unsupported = [&]() {
      return Status::errorf("unsupported operand type(s) for ", op, ": '", a.type_name(), "' and '", b.type_name(), "'");
    };
    if (op == "+") {
      if (ints) { int64_t r = 0; const bool o = __builtin_add_overflow(a.as_int(), b.as_int(), &r); return int_result(o, r); }
      if (nums) return Value::floating(a.as_double() + b.as_double());
      if (a.is_string() && b.is_string()) return make_string(a.as_string() + b.as_string());
      if (a.is_list() && b.is_list()) {
        DS_TRY(check_bytes((a.as_list().size() + b.as_list().size()) * 16));
        List out = a.as_list();
        out.insert(out.end(), b.as_list().begin(), b.as_list().end());
        return make_list(std::move(out));
      }
      if (a.is_string() || b.is_string()) return Status::errorf("can only concatenate str (not \"", (a.is_string() ? b : a).type_name(), "\") to str");
      return unsupported();
    }
    if (op == "-") {
      if (ints) { int64_t r = 0; const bool o = __builtin_sub_overflow(a.as_int(), b.as_int(), &r); return int_result(o, r); }
      if (nums) return Value::floating(a.as_double() - b.as_double());
      return unsupported();
    }
    if (op == "*") {
      if (ints) { int64_t r = 0; const bool o = __builtin_mul_overflow(a.as_int(), b.as_int(), &r); return int_result(o, r); }
      if (nums) return Value::floating(a.as_double() * b.as_double());
      const Value* seq = a.is_string() || a.is_list() ? &a : b.is_string() || b.is_list() ? &b : nullptr;
      const Value* count = seq == &a ? &b : &a;
      if (seq && (count->is_int() || count->is_bool())) {
        const int64_t n = std::max<int64_t>(0, count->as_int());
        const size_t unit = seq->is_string() ? seq->as_string().size() : seq->as_list().size() * 16;
        if (unit > 0 && static_cast<uint64_t>(n) > limits_.max_output_bytes / unit) DS_TRY(check_bytes(limits_.max_output_bytes + 1));
        if (seq->is_string()) {
          std::string out;
          for (int64_t i = 0; i < n; ++i) out += seq->as_string();
          return Value::string(std::move(out));
        }
        List out;
        for (int64_t i = 0; i < n; ++i) out.insert(out.end(), seq->as_list().begin(), seq->as_list().end());
        return make_list(std::move(out));
      }
      return unsupported();
    }
    if (op == "/") {
      if (!nums) return unsupported();
      if (b.as_double() == 0) return Status::error("division by zero");
      return Value::floating(a.as_double() / b.as_double());
    }
    if (op == "//" || op == "%") {
      if (!nums) {
        if (op == "%" && a.is_string()) return Status::error("printf-style string formatting (%) is not supported");
        return unsupported();
      }
      if (ints) {
        const int64_t x = a.as_int(), y = b.as_int();
        if (y == 0) return Status::error(op == "//" ? "integer division or modulo by zero" : "integer modulo by zero");
        if (x == INT64_MIN && y == -1) return int_result(true, 0);
        int64_t q = x / y, r = x % y;
        if (r != 0 && ((r < 0) != (y < 0))) {
          --q;
          r += y;
        }
        return Value::integer(op == "//" ? q : r);
      }
      const double x = a.as_double(), y = b.as_double();
      if (y == 0) return Status::error("float floor division by zero");
      double r = std::fmod(x, y);
      if (r != 0 && ((r < 0) != (y < 0))) r += y;
      if (op == "%") return Value::floating(r);
      return Value::floating(std::floor((x - r) / y + 0.5) == (x - r) / y ? (x - r) / y : std::floor(x / y));
    }
    if (op == "**") {
      if (!nums) return unsupported();
      if (ints && b.as_int() >= 0) {
        int64_t r = 1, base = a.as_int();
        for (int64_t e = b.as_int(); e > 0; --e) {
          if (__builtin_mul_overflow(r, base, &r)) return int_result(true, 0);
          if (r == 0 || r == 1) break;
          if (r == -1) { r = (e - 1) % 2 == 0 ? -1 : 1; break; }
        }
        return Value::integer(r);
      }
      if (a.as_double() == 0 && b.as_double() < 0) return Status::error("0.0 cannot be raised to a negative power");
      return Value::floating(std::pow(a.as_double(), b.as_double()));
    }
    return Status::error("unknown operator " + op);
  }

  Result<bool> contains(const Value& container, const Value& item) {
    switch (container.kind()) {
      case Value::Kind::undefined: return false;
      case Value::Kind::string:
        if (!item.is_string())
          return Status::errorf("'in <string>' requires string as left operand, not ", item.type_name());
        return container.as_string().find(item.as_string()) != std::string::npos;
      case Value::Kind::list:
        for (const Value& v : container.as_list())
          if (py_equal(v, item)) return true;
        return false;
      case Value::Kind::dict:
      case Value::Kind::namespace_:
        if (container.is_namespace()) return Status::error("argument of type 'Namespace' is not iterable");
        return item.is_string() && container.find(item.as_string()) != nullptr;
      default: return Status::errorf("argument of type '", container.type_name(), "' is not iterable");
    }
  }

  Result<bool> compare(const std::string& op, const Value& a, const Value& b) {
    if (op == "==") return py_equal(a, b);
    if (op == "!=") return !py_equal(a, b);
    if (op == "in") return contains(b, a);
    if (op == "notin") {
      DS_ASSIGN_OR_RETURN(bool r, contains(b, a));
      return !r;
    }
    if (a.is_undefined()) return undefined_error(a);
    if (b.is_undefined()) return undefined_error(b);
    const char* sym = op.c_str();
    auto typed = [&](Result<bool> r) -> Result<bool> {
      if (!r.ok()) return Status::errorf("'", sym, "' not supported between instances of '", a.type_name(), "' and '", b.type_name(), "'");
      return r;
    };
    if (op == "<") return typed(py_less(a, b));
    if (op == ">") return typed(py_less(b, a));
    if (op == "<=") {
      DS_ASSIGN_OR_RETURN(bool r, typed(py_less(b, a)));
      return !r;
    }
    if (op == ">=") {
      DS_ASSIGN_OR_RETURN(bool r, typed(py_less(a, b)));
      return !r;
    }
    return Status::error("unknown comparison " + op);
  }

  // ------------------------------------------------------------------------------------------ tests

  Result<bool> apply_test(const std::string& name, const Value& v, CallArgs& args) {
    const Value* arg = args.get(0, "other");
    if (name == "defined") return !v.is_undefined();
    if (name == "undefined") return v.is_undefined();
    if (name == "none") return v.is_none();
    if (name == "string") return v.is_string();
    if (name == "number") return v.is_number();
    if (name == "integer") return v.is_int();
    if (name == "float") return v.is_float();
    if (name == "boolean") return v.is_bool();
    if (name == "mapping") return v.is_dict();
    if (name == "iterable") return v.is_undefined() || v.is_list() || v.is_dict() || v.is_string();
    if (name == "sequence") return v.is_undefined() || v.is_list() || v.is_dict() || v.is_string();
    if (name == "true") return v.is_bool() && v.as_bool();
    if (name == "false") return v.is_bool() && !v.as_bool();
    if (name == "callable") return v.is_function();
    if (name == "escaped") return false;
    if (name == "odd" || name == "even" || name == "divisibleby") {
      if (v.is_undefined()) return undefined_error(v);
      if (!v.is_int() && !v.is_bool()) return Status::errorf("unsupported operand type(s) for %: '", v.type_name(), "' and 'int'");
      int64_t d = 2;
      if (name == "divisibleby") {
        if (!arg || (!arg->is_int() && !arg->is_bool())) return Status::error("divisibleby expects an integer");
        d = arg->as_int();
        if (d == 0) return Status::error("integer modulo by zero");
      }
      const int64_t r = d == -1 ? 0 : ((v.as_int() % d) + d) % d;
      return name == "odd" ? r == 1 : r == 0;
    }
    if (name == "lower" || name == "upper") {
      if (!v.is_string()) return Status::error("'" + v.type_name() + "' object has no attribute '" + name + "'");
      CallArgs none;
      Value m = method(v, name == "lower" ? "islower" : "isupper");
      DS_ASSIGN_OR_RETURN(Value r, m.as_function()(none));
      return r.as_bool();
    }
    if (!arg) return Status::errorf("test '", name, "' expects an argument");
    if (name == "eq" || name == "equalto" || name == "==") return compare("==", v, *arg);
    if (name == "ne" || name == "!=") return compare("!=", v, *arg);
    if (name == "lt" || name == "<" || name == "lessthan") return compare("<", v, *arg);
    if (name == "gt" || name == ">" || name == "greaterthan") return compare(">", v, *arg);
    if (name == "le" || name == "<=") return compare("<=", v, *arg);
    if (name == "ge" || name == ">=") return compare(">=", v, *arg);
    if (name == "in") return contains(*arg, v);
    if (name == "sameas") {
      if (v.kind() != arg->kind()) return false;
      if (v.is_none() || v.is_bool()) return py_equal(v, *arg);
      return false;
    }
    return Status::error("unknown test '" + name + "'");
  }

  // ---------------------------------------------------------------------------------------- filters

  Result<Value> apply_filter(const std::string& name, const Value& v, CallArgs& args, const Expr& at) {
    auto need_defined = [&]() -> Status { return v.is_undefined() ? undefined_error(v) : Status(); };
    if (name == "safe") return v;
    if (name == "default" || name == "d") {
      const Value* def = args.get(0, "default_value");
      const Value* boolean = args.get(1, "boolean");
      if (v.is_undefined() || (boolean && boolean->truthy() && !v.truthy())) return def ? *def : Value::string("");
      return v;
    }
    if (name == "string") {
      if (v.is_string()) return v;
      DS_ASSIGN_OR_RETURN(std::string s, to_str(v));
      return Value::string(std::move(s));
    }
    if (name == "tojson") {
      JsonOptions o;
      if (const Value* x = args.get(0, "ensure_ascii")) o.ensure_ascii = x->truthy();
      const Value* indent = args.get(1, "indent");
      if (indent && !indent->is_none()) {
        if (!indent->is_int()) return Status::error("tojson: indent must be an integer or None");
        o.indent = static_cast<int>(std::clamp<int64_t>(indent->as_int(), 0, 64));
        o.item_separator = ",";
      }
      if (const Value* sep = args.get(2, "separators"); sep && !sep->is_none()) {
        if (!sep->is_list() || sep->as_list().size() != 2 || !sep->as_list()[0].is_string() || !sep->as_list()[1].is_string())
          return Status::error("tojson: separators must be a pair of strings");
        o.item_separator = sep->as_list()[0].as_string();
        o.key_separator = sep->as_list()[1].as_string();
      }
      if (const Value* x = args.get(3, "sort_keys")) o.sort_keys = x->truthy();
      if (v.is_undefined()) return Status::error("Object of type Undefined is not JSON serializable");
      DS_TRY(check_bytes(approx_size(v, limits_.max_output_bytes + 1) * (o.indent > 0 ? 4 : 1)));
      DS_ASSIGN_OR_RETURN(std::string s, to_json(v, o));
      return make_string(std::move(s));
    }
    if (name == "length" || name == "count") {
      switch (v.kind()) {
        case Value::Kind::undefined: return Value::integer(0);
        case Value::Kind::string: return Value::integer(static_cast<int64_t>(code_points(v.as_string())));
        case Value::Kind::list: return Value::integer(static_cast<int64_t>(v.as_list().size()));
        case Value::Kind::dict: return Value::integer(static_cast<int64_t>(v.as_dict().size()));
        default: return Status::errorf("object of type '", v.type_name(), "' has no len()");
      }
    }
    if (name == "trim" || name == "upper" || name == "lower" || name == "capitalize" || name == "title") {
      DS_ASSIGN_OR_RETURN(std::string s, to_str(v));
      if (name == "trim") {
        const Value* chars = args.get(0, "chars");
        return Value::string(py_strip(s, chars && chars->is_string() ? chars : nullptr, true, true));
      }
      if (name == "upper" || name == "lower") return Value::string(map_case(s, name == "upper"));
      return Value::string(recase(s, name == "title"));
    }
    if (name == "replace") {
      DS_ASSIGN_OR_RETURN(std::string s, to_str(v));
      const Value* old = args.get(0, "old");
      const Value* with = args.get(1, "new");
      const Value* count = args.get(2, "count");
      if (!old || !with) return Status::error("replace filter expects two arguments");
      DS_ASSIGN_OR_RETURN(std::string o, to_str(*old));
      DS_ASSIGN_OR_RETURN(std::string w, to_str(*with));
      if (!o.empty() && !w.empty()) {
        size_t hits = 0;
        for (size_t pos = s.find(o); pos != std::string::npos && hits < 1u << 26; pos = s.find(o, pos + o.size())) ++hits;
        DS_TRY(check_bytes(s.size() + hits * w.size()));
      } else if (o.empty()) {
        DS_TRY(check_bytes(s.size() + (s.size() + 1) * w.size()));
      }
      return make_string(py_replace(s, o, w, count && count->is_int() ? count->as_int() : -1));
    }
    if (name == "indent") {
      DS_TRY(need_defined());
      if (!v.is_string()) return Status::errorf("unsupported operand type(s) for +=: '", v.type_name(), "' and 'str'");
      const Value* width = args.get(0, "width");
      const Value* first = args.get(1, "first");
      const Value* blank = args.get(2, "blank");
      std::string pad;
      if (width && width->is_string()) pad = width->as_string();
      else pad.assign(static_cast<size_t>(std::clamp<int64_t>(width ? width->as_int() : 4, 0, 1 << 16)), ' ');
      const std::vector<std::string> lines = py_splitlines(v.as_string() + "\n");
      DS_TRY(check_bytes(v.as_string().size() + lines.size() * (pad.size() + 1)));
      std::string out;
      if (blank && blank->truthy()) {
        for (size_t i = 0; i < lines.size(); ++i) {
          if (i) out += "\n" + pad;
          out += lines[i];
        }
      } else {
        out = lines.empty() ? std::string() : lines[0];
        for (size_t i = 1; i < lines.size(); ++i) {
          out += '\n';
          if (!lines[i].empty()) out += pad;
          out += lines[i];
        }
      }
      if (first && first->truthy()) out = pad + out;
      return make_string(std::move(out));
    }
    if (name == "join") {
      DS_ASSIGN_OR_RETURN(List items, iterate(v, at));
      const Value* sep = args.get(0, "d");
      const Value* attribute = args.get(1, "attribute");
      std::string d;
      if (sep) {
        DS_ASSIGN_OR_RETURN(d, to_str(*sep));
      }
      std::string out;
      for (size_t i = 0; i < items.size(); ++i) {
        Value item = items[i];
        if (attribute && !attribute->is_none()) {
          DS_ASSIGN_OR_RETURN(item, attr_path(item, *attribute));
        }
        if (i) out += d;
        DS_ASSIGN_OR_RETURN(std::string s, to_str(item));
        out += s;
        DS_TRY(check_bytes(out.size()));
      }
      return Value::string(std::move(out));
    }
    if (name == "items") {
      if (v.is_undefined()) return Value::list({});
      if (!v.is_dict()) return Status::error("Can only get item pairs from a mapping.");
      return dict_view(v, 0);
    }
    if (name == "list") {
      DS_ASSIGN_OR_RETURN(List items, iterate(v, at));
      return Value::list(std::move(items));
    }
    if (name == "first" || name == "last") {
      if (name == "last" && v.is_undefined()) return Value::undefined("No last item, sequence was empty.");
      DS_ASSIGN_OR_RETURN(List items, iterate(v, at));
      if (items.empty()) return Value::undefined(name == "first" ? "No first item, sequence was empty." : "No last item, sequence was empty.");
      return name == "first" ? items.front() : items.back();
    }
    if (name == "reverse") {
      if (v.is_string()) {
        std::u32string u = to_u32(v.as_string());
        std::reverse(u.begin(), u.end());
        return Value::string(from_u32(u));
      }
      DS_ASSIGN_OR_RETURN(List items, iterate(v, at));
      std::reverse(items.begin(), items.end());
      return Value::list(std::move(items));
    }
    if (name == "e" || name == "escape") {
      DS_ASSIGN_OR_RETURN(std::string s, to_str(v));
      if (v.is_none()) s = "None";
      std::string out;
      for (char c : s) {
        switch (c) {
          case '&': out += "&amp;"; break;
          case '<': out += "&lt;"; break;
          case '>': out += "&gt;"; break;
          case '"': out += "&#34;"; break;
          case '\'': out += "&#39;"; break;
          default: out += c;
        }
      }
      return make_string(std::move(out));
    }
    if (name == "abs") {
      DS_TRY(need_defined());
      if (!v.is_number()) return Status::errorf("bad operand type for abs(): '", v.type_name(), "'");
      if (v.is_float()) return Value::floating(std::fabs(v.as_double()));
      if (v.as_int() == INT64_MIN) return int_result(true, 0);
      return Value::integer(std::llabs(v.as_int()));
    }
    if (name == "int" || name == "float") {
      const Value* def = args.get(0, "default");
      const Value fallback = def ? *def : (name == "int" ? Value::integer(0) : Value::floating(0.0));
      if (v.is_bool() || v.is_int()) return name == "int" ? Value::integer(v.as_int()) : Value::floating(v.as_double());
      if (v.is_float()) {
        if (name == "float") return v;
        const double d = v.as_double();
        if (!std::isfinite(d) || std::fabs(d) >= 9.2e18) return fallback;
        return Value::integer(static_cast<int64_t>(d));
      }
      if (v.is_string()) {
        const std::string s = py_strip(v.as_string(), nullptr, true, true);
        if (s.empty()) return fallback;
        char* end = nullptr;
        errno = 0;
        if (name == "int") {
          const long long i = std::strtoll(s.c_str(), &end, 10);
          if (*end == '\0' && errno == 0) return Value::integer(i);
          const double d = std::strtod(s.c_str(), &end);
          if (*end == '\0' && std::isfinite(d) && std::fabs(d) < 9.2e18) return Value::integer(static_cast<int64_t>(d));
          return fallback;
        }
        const double d = std::strtod(s.c_str(), &end);
        return *end == '\0' ? Value::floating(d) : fallback;
      }
      return fallback;
    }
    if (name == "round") {
      DS_TRY(need_defined());
      if (!v.is_number()) return Status::error("round filter expects a number");
      const Value* precision = args.get(0, "precision");
      const int64_t p = precision && precision->is_int() ? std::clamp<int64_t>(precision->as_int(), -20, 20) : 0;
      const double scale = std::pow(10.0, static_cast<double>(p));
      double r = v.as_double() * scale;
      const double fl = std::floor(r);
      r = (r - fl == 0.5) ? (std::fmod(fl, 2.0) == 0 ? fl : fl + 1) : std::round(r);  // Python rounds half to even
      return Value::floating(r / scale);
    }
    if (name == "wordcount") {
      DS_ASSIGN_OR_RETURN(std::string s, to_str(v));
      DS_ASSIGN_OR_RETURN(Value parts, split(s, nullptr, -1, false));
      return Value::integer(static_cast<int64_t>(parts.as_list().size()));
    }
    if (name == "center") {
      DS_ASSIGN_OR_RETURN(std::string s, to_str(v));
      const Value* width = args.get(0, "width");
      const int64_t w = std::clamp<int64_t>(width && width->is_int() ? width->as_int() : 80, 0, 1 << 20);
      const int64_t n = static_cast<int64_t>(code_points(s));
      if (w <= n) return Value::string(s);
      const int64_t total = w - n;
      const int64_t left = total / 2 + (total & w & 1);
      return Value::string(std::string(static_cast<size_t>(left), ' ') + s + std::string(static_cast<size_t>(total - left), ' '));
    }
    if (name == "attr") {
      const Value* a = args.get(0, "name");
      if (!a || !a->is_string()) return Status::error("attr filter expects a name");
      DS_TRY(need_defined());
      if (v.is_dict() || v.is_namespace()) {
        if (v.is_dict()) if (Value m = method(v, a->as_string()); m.is_function()) return m;
        if (v.is_namespace()) if (const Value* x = v.find(a->as_string())) return *x;
        return Value::undefined("'" + object_name(v) + "' has no attribute '" + a->as_string() + "'");
      }
      return get_attr(v, a->as_string());
    }
    // Filters over sequences.
    DS_ASSIGN_OR_RETURN(List items, iterate(v, at));
    if (name == "sort" || name == "unique" || name == "min" || name == "max" || name == "dictsort") {
      const Value* reverse = args.get(0, "reverse");
      const Value* case_sensitive = args.get(1, "case_sensitive");
      const Value* attribute = args.get(2, "attribute");
      if (name != "sort") {
        reverse = nullptr;
        case_sensitive = args.get(0, "case_sensitive");
        attribute = args.get(1, "attribute");
      }
      if (name == "dictsort") {
        if (!v.is_dict()) return Status::error("dictsort expects a mapping");
        items = dict_view(v, 0).as_list();
        Value key_index = Value::integer(args.get(1, "by") && args.get(1, "by")->is_string() && args.get(1, "by")->as_string() == "value" ? 1 : 0);
        attribute = nullptr;
        (void)key_index;
      }
      const bool cs = case_sensitive && case_sensitive->truthy();
      List keys;
      for (const Value& item : items) {
        Value k = item;
        if (attribute && !attribute->is_none()) {
          DS_ASSIGN_OR_RETURN(k, attr_path(item, *attribute));
        }
        if (!cs && k.is_string()) k = Value::string(map_case(k.as_string(), false));
        if (name == "dictsort" && !cs && k.is_list() && !k.as_list().empty() && k.as_list()[0].is_string())
          k = Value::list({Value::string(map_case(k.as_list()[0].as_string(), false)), k.as_list()[1]});
        keys.push_back(std::move(k));
      }
      std::vector<size_t> order(items.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      Status failure;
      std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
        auto r = py_less(keys[x], keys[y]);
        if (!r.ok()) {
          if (failure.ok()) failure = r.status();
          return false;
        }
        return *r;
      });
      DS_TRY(failure);
      if (name == "min" || name == "max") {
        if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
        size_t best = order.front();
        if (name == "max") {  // Python max keeps the first of equal maxima
          for (size_t i : order) {
            auto less = py_less(keys[best], keys[i]);
            if (less.ok() && *less) best = i;
          }
        }
        return items[best];
      }
      if (name == "unique") {
        List out, seen;
        for (size_t i = 0; i < items.size(); ++i) {
          bool dup = false;
          for (const Value& s : seen) dup = dup || py_equal(s, keys[i]);
          if (dup) continue;
          seen.push_back(keys[i]);
          out.push_back(items[i]);
        }
        return Value::list(std::move(out));
      }
      List out;
      for (size_t i : order) out.push_back(items[i]);
      if (reverse && reverse->truthy()) std::reverse(out.begin(), out.end());
      return Value::list(std::move(out));
    }
    if (name == "sum") {
      const Value* attribute = args.get(0, "attribute");
      const Value* start = args.get(1, "start");
      Value total = start ? *start : Value::integer(0);
      for (const Value& item : items) {
        Value x = item;
        if (attribute && !attribute->is_none()) {
          DS_ASSIGN_OR_RETURN(x, attr_path(item, *attribute));
        }
        DS_ASSIGN_OR_RETURN(total, binary("+", total, x));
      }
      return total;
    }
    if (name == "batch") {
      const Value* size = args.get(0, "linecount");
      if (!size || !size->is_int() || size->as_int() <= 0) return Status::error("batch expects a positive size");
      const Value* fill = args.get(1, "fill_with");
      List out, current;
      for (const Value& item : items) {
        current.push_back(item);
        if (static_cast<int64_t>(current.size()) == size->as_int()) {
          out.push_back(Value::list(std::move(current)));
          current.clear();
        }
      }
      if (!current.empty()) {
        if (fill && !fill->is_none())
          while (static_cast<int64_t>(current.size()) < size->as_int()) current.push_back(*fill);
        out.push_back(Value::list(std::move(current)));
      }
      return Value::list(std::move(out));
    }
    if (name == "map") {
      List out;
      const Value* attribute = nullptr;
      for (const auto& [k, x] : args.keyword)
        if (k == "attribute") attribute = &x;
      if (attribute) {
        const Value* def = nullptr;
        for (const auto& [k, x] : args.keyword)
          if (k == "default") def = &x;
        for (const Value& item : items) {
          DS_ASSIGN_OR_RETURN(Value x, attr_path(item, *attribute));
          out.push_back(x.is_undefined() && def ? *def : x);
        }
        return Value::list(std::move(out));
      }
      if (args.positional.empty() || !args.positional[0].is_string()) return Status::error("map expects a filter name or attribute=");
      const std::string filter = args.positional[0].as_string();
      if (!known(std::begin(kFilters), std::end(kFilters), filter)) return Status::error("No filter named '" + filter + "'.");
      CallArgs rest;
      rest.positional.assign(args.positional.begin() + 1, args.positional.end());
      rest.keyword = args.keyword;
      for (const Value& item : items) {
        DS_TRY(tick());
        DS_ASSIGN_OR_RETURN(Value x, apply_filter(filter, item, rest, at));
        out.push_back(std::move(x));
      }
      return Value::list(std::move(out));
    }
    if (name == "select" || name == "reject" || name == "selectattr" || name == "rejectattr") {
      const bool by_attr = name == "selectattr" || name == "rejectattr";
      const bool keep_if = name == "select" || name == "selectattr";
      size_t at_arg = 0;
      Value attribute;
      if (by_attr) {
        if (args.positional.empty()) return Status::error(name + " expects an attribute name");
        attribute = args.positional[0];
        at_arg = 1;
      }
      std::string test;
      CallArgs test_args;
      if (args.positional.size() > at_arg) {
        if (!args.positional[at_arg].is_string()) return Status::error(name + " expects a test name");
        test = args.positional[at_arg].as_string();
        if (!known(std::begin(kTests), std::end(kTests), test)) return Status::error("No test named '" + test + "'.");
        test_args.positional.assign(args.positional.begin() + static_cast<std::ptrdiff_t>(at_arg) + 1, args.positional.end());
      }
      List out;
      for (const Value& item : items) {
        DS_TRY(tick());
        Value x = item;
        if (by_attr) {
          DS_ASSIGN_OR_RETURN(x, attr_path(item, attribute));
        }
        bool r;
        if (test.empty()) {
          r = x.truthy();
        } else {
          DS_ASSIGN_OR_RETURN(r, apply_test(test, x, test_args));
        }
        if (r == keep_if) out.push_back(item);
      }
      return Value::list(std::move(out));
    }
    return Status::error("unknown filter '" + name + "'");
  }

  // jinja2's make_attrgetter: "a.b" / "a.0" paths, getitem semantics.
  Result<Value> attr_path(const Value& item, const Value& attribute) {
    if (attribute.is_int()) return get_item(item, attribute);
    if (!attribute.is_string()) return Status::error("attribute must be a string or an integer");
    Value cur = item;
    const std::string& path = attribute.as_string();
    size_t start = 0;
    while (true) {
      const size_t dot = path.find('.', start);
      const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      Value key = Value::string(part);
      if (!part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; }) && part.size() < 18)
        key = Value::integer(std::stoll(part));
      if (cur.is_undefined()) return cur;
      DS_ASSIGN_OR_RETURN(cur, get_item(cur, key));
      if (dot == std::string::npos) return cur;
      start = dot + 1;
    }
  }
};

}  // namespace

Status check_template(const Program& program) { return check_body(program.body, false); }

Result<std::string> render_template(const Program& program, const Dict& globals, const RenderLimits& limits,
                                    std::function<std::string(const std::string&)> strftime_now) {
  Renderer renderer(limits, std::move(strftime_now));
  return renderer.run(program, globals);
}

Result<std::string> render_template_source(std::string_view source, const Dict& globals, const RenderLimits& limits) {
  DS_ASSIGN_OR_RETURN(Program program, parse_template(source));
  DS_TRY(check_template(program));
  return render_template(program, globals, limits);
}

}  // namespace ds::jinja
