// Jinja tests (`x is defined`, `is divisibleby 3`, ...): the ones jinja2.tests provides, as HF's
// chat-template environment has them.
#include "tokenizer/jinja/render_internal.h"

namespace ds::jinja::detail {

Result<bool> Renderer::apply_test(const std::string& name, const Value& v, CallArgs& args) {
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

}  // namespace ds::jinja::detail
