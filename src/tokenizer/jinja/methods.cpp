// Bound methods of str, dict and list for the Jinja interpreter (the ones jinja2's sandbox lets a
// template call: startswith, strip, split, replace, get, items, ...), with CPython's semantics.
#include "tokenizer/jinja/render_internal.h"

#include <utf8proc.h>

#include <algorithm>

#include "tokenizer/utf8.h"

namespace ds::jinja::detail {

// Bound methods of str, dict and list (the sandbox blocks the ones that modify).
Value Renderer::method(const Value& obj, const std::string& name) {
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

Value Renderer::dict_view(const Value& self, int which) {
  List out;
  for (const auto& [k, v] : self.as_dict()) {
    if (which == 0) out.push_back(Value::list({Value::string(k), v}));
    else if (which == 1) out.push_back(Value::string(k));
    else out.push_back(v);
  }
  return Value::list(std::move(out));
}

std::string Renderer::recase(const std::string& s, bool title) {
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

Result<Value> Renderer::split(const std::string& s, const Value* sep, int64_t maxsplit, bool from_right) {
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

}  // namespace ds::jinja::detail
