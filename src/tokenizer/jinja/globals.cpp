// Template globals of the Jinja interpreter: jinja2's range / namespace / dict (range capped as the
// sandbox caps it) and HF's raise_exception and strftime_now.
#include "tokenizer/jinja/render_internal.h"

#include <algorithm>
#include <cmath>
#include <ctime>

namespace ds::jinja::detail {

Result<Value> Renderer::lookup_name(const std::string& name, const FramePtr& frame) {
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

Result<Value> Renderer::builtin_range(CallArgs& a) {
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

}  // namespace ds::jinja::detail
