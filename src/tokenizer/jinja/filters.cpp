// Jinja filters (`x | tojson`, `| join`, `| selectattr`, ...): jinja2.filters' semantics, with tojson as
// HF defines it (json.dumps, ensure_ascii=False) and jinja2's make_attrgetter for attribute paths.
#include "tokenizer/jinja/render_internal.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iterator>

namespace ds::jinja::detail {

Result<Value> Renderer::apply_filter(const std::string& name, const Value& v, CallArgs& args, const Expr& at) {
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
Result<Value> Renderer::attr_path(const Value& item, const Value& attribute) {
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

}  // namespace ds::jinja::detail
