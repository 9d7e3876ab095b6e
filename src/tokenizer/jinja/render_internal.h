// Internals of the Jinja interpreter (render.h), shared by its files: Python str helpers, scopes, the
// Renderer class (jinja2's CodeGenerator + runtime, as HF's sandboxed chat-template environment runs it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/render.h"
#include "tokenizer/jinja/value.h"
#include "util/status.h"

namespace ds::jinja::detail {

// ---------------------------------------------------------------------------------------------------------
// Text helpers (py_text.cpp; Python str semantics on UTF-8: indices and lengths count code points).

std::u32string to_u32(const std::string& s);
std::string from_u32(std::u32string_view s);
size_t code_points(const std::string& s);
bool py_isspace(char32_t c);
char32_t to_upper(char32_t c);
char32_t to_lower(char32_t c);
bool is_cased_letter(char32_t c);
std::string map_case(const std::string& s, bool upper);
std::string py_strip(const std::string& s, const Value* chars, bool left, bool right);
std::string py_replace(const std::string& s, const std::string& old, const std::string& with, int64_t count);
// str.splitlines() (no keepends).
std::vector<std::string> py_splitlines(const std::string& s);
// Python slice indices (slice.indices).
void slice_indices(int64_t length, const Value& start_v, const Value& stop_v, int64_t step, int64_t& start, int64_t& stop);

// ---------------------------------------------------------------------------------------------------------
// Scopes: a frame per scope (loop iteration, macro call, block set), chained to where it was opened.

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

inline constexpr const char* kFilters[] = {"tojson", "string", "length", "count", "trim", "upper", "lower", "join", "items", "list",
                                           "first", "last", "default", "d", "safe", "replace", "indent", "capitalize", "title",
                                           "abs", "int", "float", "reverse", "sort", "unique", "min", "max", "sum", "map", "select",
                                           "reject", "selectattr", "rejectattr", "e", "escape", "round", "wordcount", "center",
                                           "dictsort", "batch", "attr"};
inline constexpr const char* kTests[] = {"defined", "undefined", "none", "string", "number", "integer", "float", "boolean",
                                         "mapping", "iterable", "sequence", "true", "false", "callable", "odd", "even",
                                         "divisibleby", "eq", "equalto", "==", "ne", "!=", "lt", "<", "lessthan", "gt", ">",
                                         "greaterthan", "le", "<=", "ge", ">=", "in", "lower", "upper", "sameas", "escaped"};

// check.cpp: whether `name` is in a table of names (kFilters, kTests).
bool known(const char* const* begin, const char* const* end, const std::string& name);
// render.cpp: "template line L, column C: ".
std::string where(int line, int column);
// eval.cpp: "dict object", "list object", ... as jinja2 names an object in "has no attribute" messages.
std::string object_name(const Value& v);
// budgets.cpp: rough byte size of a value's str()/tojson(), stopping once it passes `cap` (namespaces count as small).
size_t approx_size(const Value& v, size_t cap);
// How deep lists and dicts nest in `v` (counting stops at `cap`).
int nesting(const Value& v, int cap);

class Renderer {
 public:
  Renderer(const RenderLimits& limits, std::function<std::string(const std::string&)> clock);
  ~Renderer();
  Result<std::string> run(const Program& program, const Dict& globals);

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

  // render.cpp: errors
  static Status err(const Expr& e, const std::string& message);
  static Status located(const Expr& e, const Status& s);
  static Status undefined_error(const Value& v);

  // budgets.cpp: output size, evaluation steps
  Status tick();
  Status check_bytes(size_t n) const;
  Result<Value> make_string(std::string s) const;
  Result<Value> make_list(List items) const;
  Result<std::string> to_str(const Value& v) const;

  // render.cpp: statements
  Status render_body(const Body& body, const FramePtr& frame, std::string& out, Flow& flow);
  Status render_node(const Node& node, const FramePtr& frame, std::string& out, Flow& flow);
  Status assign(const std::vector<std::string>& targets, Value v, const FramePtr& frame, const Expr& at);
  Status render_for(const Node& node, const FramePtr& frame, std::string& out);
  Value make_macro(const Node& node, const FramePtr& frame, const std::string& name);
  Result<Value> call_macro(const Node& def, const std::weak_ptr<Frame>& weak, const std::string& /*name*/, CallArgs& args);

  // eval.cpp: expressions
  Result<List> iterate(const Value& v, const Expr& at);
  Status eval_args(const Expr& e, size_t first, const FramePtr& frame, CallArgs& args);
  Result<Value> eval(const Expr& e, const FramePtr& frame);
  Result<Value> get_attr(const Value& obj, const std::string& name);
  Result<Value> get_item(const Value& obj, const Value& key);
  Result<Value> eval_inner(const Expr& e, const FramePtr& frame);
  Result<Value> eval_slice(const Expr& e, const FramePtr& frame);

  // globals.cpp: the template globals HF provides
  Result<Value> lookup_name(const std::string& name, const FramePtr& frame);
  static Result<Value> builtin_range(CallArgs& a);

  // methods.cpp: bound methods of str, dict and list
  Value method(const Value& obj, const std::string& name);
  static Value dict_view(const Value& self, int which);
  static std::string recase(const std::string& s, bool title);
  Result<Value> split(const std::string& s, const Value* sep, int64_t maxsplit, bool from_right);

  // operators.cpp: binary operators and comparisons
  static Result<Value> int_result(bool overflow, int64_t r);
  Result<Value> binary(const std::string& op, const Value& a, const Value& b);
  Result<bool> contains(const Value& container, const Value& item);
  Result<bool> compare(const std::string& op, const Value& a, const Value& b);

  // tests.cpp: `is` tests
  Result<bool> apply_test(const std::string& name, const Value& v, CallArgs& args);

  // filters.cpp: filters
  Result<Value> apply_filter(const std::string& name, const Value& v, CallArgs& args, const Expr& at);
  Result<Value> attr_path(const Value& item, const Value& attribute);
};

}  // namespace ds::jinja::detail
