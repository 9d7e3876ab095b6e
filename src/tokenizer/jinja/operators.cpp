// Binary operators and comparisons of the Jinja interpreter: Python's + - * / // % ** ~, in / not in and
// ordering, on 64-bit integers (overflow is an error) as jinja2 evaluates them on Python objects.
#include "tokenizer/jinja/render_internal.h"

#include <algorithm>
#include <cmath>

namespace ds::jinja::detail {

Result<Value> Renderer::int_result(bool overflow, int64_t r) {
  if (overflow) return Status::error("integer overflow (deltaserve's integers are 64-bit)");
  return Value::integer(r);
}

Result<Value> Renderer::binary(const std::string& op, const Value& a, const Value& b) {
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

Result<bool> Renderer::contains(const Value& container, const Value& item) {
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

Result<bool> Renderer::compare(const std::string& op, const Value& a, const Value& b) {
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

}  // namespace ds::jinja::detail
