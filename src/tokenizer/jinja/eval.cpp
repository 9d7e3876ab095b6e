// Expression evaluation of the Jinja interpreter: names, attributes and items (jinja2's getattr / getitem
// under the sandbox), calls, filters and tests dispatch, boolean operators, inline if, literals and slices.
#include "tokenizer/jinja/render_internal.h"

#include "tokenizer/utf8.h"
#include "util/str_cat.h"

namespace ds::jinja::detail {

// Messages are built with str_cat: GCC 12 reports a false -Wrestrict on some `"'" + std::string` chains here.

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

// Python iteration: list items, dict keys, string code points; undefined iterates as empty.
Result<List> Renderer::iterate(const Value& v, const Expr& at) {
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
    default: return err(at, str_cat("'", v.type_name(), "' object is not iterable"));
  }
}

Status Renderer::eval_args(const Expr& e, size_t first, const FramePtr& frame, CallArgs& args) {
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

Result<Value> Renderer::eval(const Expr& e, const FramePtr& frame) {
  DS_TRY(tick());
  auto result = eval_inner(e, frame);
  if (!result.ok()) return located(e, result.status());
  return result;
}

// getattr as jinja2 does it: the attribute (methods), then the item.
Result<Value> Renderer::get_attr(const Value& obj, const std::string& name) {
  if (obj.is_undefined()) return undefined_error(obj);
  if (obj.is_dict()) {
    if (Value m = method(obj, name); m.is_function()) return m;
    if (const Value* v = obj.find(name)) return *v;
  } else if (obj.is_namespace()) {
    if (const Value* v = obj.find(name)) return *v;
  } else if (Value m = method(obj, name); m.is_function()) {
    return m;
  }
  return Value::undefined(str_cat("'", object_name(obj), "' has no attribute '", name, "'"));
}

Result<Value> Renderer::get_item(const Value& obj, const Value& key) {
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
    return Value::undefined(str_cat("'", object_name(obj), "' has no attribute '", py_str(key), "'"));
  }
  return Value::undefined(str_cat("'", object_name(obj), "' has no attribute '", py_str(key), "'"));
}

Result<Value> Renderer::eval_inner(const Expr& e, const FramePtr& frame) {
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

Result<Value> Renderer::eval_slice(const Expr& e, const FramePtr& frame) {
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

}  // namespace ds::jinja::detail
