// Jinja runtime values with Python semantics (jinja2 runs on Python objects): None, bool, int, float,
// str, list, dict (insertion-ordered), plus undefined, namespaces, macros and bound methods.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/status.h"

namespace ds::jinja {

class Value;
using List = std::vector<Value>;
using Dict = std::vector<std::pair<std::string, Value>>;  // Python dicts keep insertion order
struct CallArgs;
using Function = std::function<Result<Value>(CallArgs&)>;

class Value {
 public:
  enum class Kind { undefined, none, boolean, integer, floating, string, list, dict, function, namespace_ };

  Value() = default;  // undefined
  static Value none() { return Value(Kind::none); }
  static Value boolean(bool b) { Value v(Kind::boolean); v.b_ = b; return v; }
  static Value integer(int64_t i) { Value v(Kind::integer); v.i_ = i; return v; }
  static Value floating(double d) { Value v(Kind::floating); v.d_ = d; return v; }
  static Value string(std::string s) { Value v(Kind::string); v.s_ = std::make_shared<std::string>(std::move(s)); return v; }
  static Value list(List items) { Value v(Kind::list); v.l_ = std::make_shared<List>(std::move(items)); return v; }
  static Value dict(Dict items) { Value v(Kind::dict); v.m_ = std::make_shared<Dict>(std::move(items)); return v; }
  static Value function(Function f, std::string name) {
    Value v(Kind::function); v.f_ = std::make_shared<Function>(std::move(f)); v.s_ = std::make_shared<std::string>(std::move(name)); return v;
  }
  static Value make_namespace(Dict items) { Value v(Kind::namespace_); v.m_ = std::make_shared<Dict>(std::move(items)); return v; }
  static Value undefined(std::string name) { Value v; v.s_ = std::make_shared<std::string>(std::move(name)); return v; }
  static Value from_json(const nlohmann::ordered_json& json);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::undefined; }
  bool is_none() const { return kind_ == Kind::none; }
  bool is_bool() const { return kind_ == Kind::boolean; }
  bool is_int() const { return kind_ == Kind::integer; }
  bool is_float() const { return kind_ == Kind::floating; }
  bool is_number() const { return kind_ == Kind::integer || kind_ == Kind::floating || kind_ == Kind::boolean; }
  bool is_string() const { return kind_ == Kind::string; }
  bool is_list() const { return kind_ == Kind::list; }
  bool is_dict() const { return kind_ == Kind::dict; }
  bool is_function() const { return kind_ == Kind::function; }
  bool is_namespace() const { return kind_ == Kind::namespace_; }

  bool as_bool() const { return b_; }
  int64_t as_int() const { return kind_ == Kind::boolean ? (b_ ? 1 : 0) : i_; }
  double as_double() const { return kind_ == Kind::floating ? d_ : static_cast<double>(as_int()); }
  const std::string& as_string() const { return *s_; }
  const List& as_list() const { return *l_; }
  List& as_list() { return *l_; }
  const Dict& as_dict() const { return *m_; }
  Dict& as_dict() { return *m_; }  // dicts and namespaces
  const Function& as_function() const { return *f_; }
  const std::string& undefined_name() const { static const std::string kEmpty; return s_ ? *s_ : kEmpty; }

  const Value* find(const std::string& key) const;  // dict / namespace lookup
  void set(const std::string& key, Value value);     // dict / namespace store

  bool truthy() const;
  std::string type_name() const;  // Python's type name, for messages

 private:
  explicit Value(Kind kind) : kind_(kind) {}
  Kind kind_ = Kind::undefined;
  bool b_ = false;
  int64_t i_ = 0;
  double d_ = 0;
  std::shared_ptr<std::string> s_;
  std::shared_ptr<List> l_;
  std::shared_ptr<Dict> m_;
  std::shared_ptr<Function> f_;
};

// Arguments of a call: positional then keyword, as Python passes them.
struct CallArgs {
  List positional;
  Dict keyword;
  const Value* get(size_t index, const std::string& name) const;  // positional index or keyword name
};

// Python str() / repr() and json.dumps as HF's tojson calls it.
std::string py_str(const Value& value);
std::string py_repr(const Value& value);
std::string py_float_repr(double d);
struct JsonOptions {
  int indent = -1;  // -1: None
  bool sort_keys = false;
  bool ensure_ascii = false;
  std::string item_separator = ", ", key_separator = ": ";
};
Result<std::string> to_json(const Value& value, const JsonOptions& options);

bool py_equal(const Value& a, const Value& b);
// Python ordering (<); error for unorderable types.
Result<bool> py_less(const Value& a, const Value& b);

}  // namespace ds::jinja
