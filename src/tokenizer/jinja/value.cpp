// Python semantics of Jinja values: truthiness, str/repr (float repr, quote choice), equality and
// ordering, and json.dumps(ensure_ascii=False) as transformers' tojson filter calls it.
#include "tokenizer/jinja/value.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "tokenizer/utf8.h"

namespace ds::jinja {

Value Value::from_json(const nlohmann::ordered_json& json) {
  switch (json.type()) {
    case nlohmann::ordered_json::value_t::null: return none();
    case nlohmann::ordered_json::value_t::boolean: return boolean(json.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return integer(json.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: return integer(static_cast<int64_t>(json.get<uint64_t>()));
    case nlohmann::ordered_json::value_t::number_float: return floating(json.get<double>());
    case nlohmann::ordered_json::value_t::string: return string(json.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      List items;
      for (const auto& item : json) items.push_back(from_json(item));
      return list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      Dict items;
      for (const auto& [key, item] : json.items()) items.emplace_back(key, from_json(item));
      return dict(std::move(items));
    }
    default: return none();
  }
}

const Value* Value::find(const std::string& key) const {
  if (!m_) return nullptr;
  for (const auto& [k, v] : *m_)
    if (k == key) return &v;
  return nullptr;
}

void Value::set(const std::string& key, Value value) {
  for (auto& [k, v] : *m_) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  m_->emplace_back(key, std::move(value));
}

bool Value::truthy() const {
  switch (kind_) {
    case Kind::undefined:
    case Kind::none: return false;
    case Kind::boolean: return b_;
    case Kind::integer: return i_ != 0;
    case Kind::floating: return d_ != 0.0;
    case Kind::string: return !s_->empty();
    case Kind::list: return !l_->empty();
    case Kind::dict: return !m_->empty();
    default: return true;
  }
}

std::string Value::type_name() const {
  switch (kind_) {
    case Kind::undefined: return "undefined";
    case Kind::none: return "NoneType";
    case Kind::boolean: return "bool";
    case Kind::integer: return "int";
    case Kind::floating: return "float";
    case Kind::string: return "str";
    case Kind::list: return "list";
    case Kind::dict: return "dict";
    case Kind::function: return "function";
    case Kind::namespace_: return "Namespace";
  }
  return "?";
}

const Value* CallArgs::get(size_t index, const std::string& name) const {
  if (index < positional.size()) return &positional[index];
  for (const auto& [k, v] : keyword)
    if (k == name) return &v;
  return nullptr;
}

std::string py_float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buffer[40];
  int precision = 1;
  for (; precision <= 17; ++precision) {  // shortest digits that round-trip, as Python's repr
    std::snprintf(buffer, sizeof buffer, "%.*e", precision - 1, d);
    if (std::strtod(buffer, nullptr) == d) break;
  }
  // buffer: d.ddde±XX; decide Python's layout from the decimal exponent.
  std::string s(buffer);
  const size_t e = s.find('e');
  const int exponent = std::atoi(s.c_str() + e + 1);
  std::string digits;
  for (size_t i = 0; i < e; ++i)
    if (std::isdigit(static_cast<unsigned char>(s[i]))) digits += s[i];
  // Appends instead of operator+ chains (GCC 12 reports a false -Wrestrict on those).
  std::string out = std::signbit(d) ? "-" : "";
  if (exponent < -4 || exponent >= 16) {
    out += digits[0];
    if (digits.size() > 1) {
      out += '.';
      out.append(digits, 1, std::string::npos);
    }
    const int magnitude = std::abs(exponent);  // at most 324 for doubles
    out += exponent < 0 ? "e-" : "e+";
    if (magnitude < 10) out += '0';
    out += std::to_string(magnitude);
  } else if (exponent < 0) {
    out += "0.";
    out.append(static_cast<size_t>(-exponent - 1), '0');
    out += digits;
  } else if (static_cast<int>(digits.size()) <= exponent + 1) {
    out += digits;
    out.append(static_cast<size_t>(exponent + 1 - static_cast<int>(digits.size())), '0');
    out += ".0";
  } else {
    out.append(digits, 0, static_cast<size_t>(exponent + 1));
    out += '.';
    out.append(digits, static_cast<size_t>(exponent + 1), std::string::npos);
  }
  return out;
}

namespace {

std::string repr_string(const std::string& s) {
  // Python picks single quotes unless the text has ' and no ".
  const bool has_single = s.find('\'') != std::string::npos, has_double = s.find('"') != std::string::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (size_t pos = 0; pos < s.size();) {
    const size_t start = pos;
    const char32_t c = utf8::decode(s, pos);
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F || (c >= 0x80 && c < 0xA0)) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\x%02x", static_cast<unsigned>(c));
      out += buffer;
    } else {
      out.append(s, start, pos - start);  // printable (approximation: Python also escapes other non-printables)
    }
  }
  out += quote;
  return out;
}

void json_string(const std::string& s, bool ensure_ascii, std::string& out) {
  out += '"';
  for (size_t pos = 0; pos < s.size();) {
    const size_t start = pos;
    const char32_t c = utf8::decode(s, pos);
    char buffer[16];
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20 || (ensure_ascii && c >= 0x7F)) {
          if (c >= 0x10000) {
            const char32_t v = c - 0x10000;
            std::snprintf(buffer, sizeof buffer, "\\u%04x\\u%04x", static_cast<unsigned>(0xD800 + (v >> 10)),
                          static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
          } else {
            std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(c));
          }
          out += buffer;
        } else {
          out.append(s, start, pos - start);
        }
    }
  }
  out += '"';
}

Status json_value(const Value& v, const JsonOptions& o, int depth, std::string& out) {
  if (depth > 512) return Status::error("tojson: expected nesting depth <= 512, found deeper");
  auto newline = [&](int level) {
    if (o.indent < 0) return;
    out += '\n';
    out.append(static_cast<size_t>(o.indent * level), ' ');
  };
  switch (v.kind()) {
    case Value::Kind::none: out += "null"; return Status();
    case Value::Kind::boolean: out += v.as_bool() ? "true" : "false"; return Status();
    case Value::Kind::integer: out += std::to_string(v.as_int()); return Status();
    case Value::Kind::floating: {
      const double d = v.as_double();
      out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d > 0 ? "Infinity" : "-Infinity") : py_float_repr(d);
      return Status();
    }
    case Value::Kind::string: json_string(v.as_string(), o.ensure_ascii, out); return Status();
    case Value::Kind::list: {
      if (v.as_list().empty()) { out += "[]"; return Status(); }
      out += '[';
      for (size_t i = 0; i < v.as_list().size(); ++i) {
        if (i > 0) out += o.item_separator;
        newline(depth + 1);
        DS_TRY(json_value(v.as_list()[i], o, depth + 1, out));
      }
      newline(depth);
      out += ']';
      return Status();
    }
    case Value::Kind::dict:
    case Value::Kind::namespace_: {
      if (!v.is_dict()) return Status::error("tojson: Object of type Namespace is not JSON serializable");
      if (v.as_dict().empty()) { out += "{}"; return Status(); }
      std::vector<const std::pair<std::string, Value>*> items;
      for (const auto& item : v.as_dict()) items.push_back(&item);
      if (o.sort_keys) std::stable_sort(items.begin(), items.end(), [](auto* a, auto* b) { return a->first < b->first; });
      out += '{';
      for (size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out += o.item_separator;
        newline(depth + 1);
        json_string(items[i]->first, o.ensure_ascii, out);
        out += o.key_separator;
        DS_TRY(json_value(items[i]->second, o, depth + 1, out));
      }
      newline(depth);
      out += '}';
      return Status();
    }
    default: return Status::errorf("tojson: Object of type ", v.type_name(), " is not JSON serializable");
  }
}

}  // namespace

std::string py_repr(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::string: return repr_string(v.as_string());
    case Value::Kind::list: {
      std::string out = "[";
      for (size_t i = 0; i < v.as_list().size(); ++i) out += (i ? ", " : "") + py_repr(v.as_list()[i]);
      return out + "]";
    }
    case Value::Kind::dict: {
      std::string out = "{";
      for (size_t i = 0; i < v.as_dict().size(); ++i)
        out += (i ? ", " : "") + repr_string(v.as_dict()[i].first) + ": " + py_repr(v.as_dict()[i].second);
      return out + "}";
    }
    default: return py_str(v);
  }
}

std::string py_str(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::undefined: return "";
    case Value::Kind::none: return "None";
    case Value::Kind::boolean: return v.as_bool() ? "True" : "False";
    case Value::Kind::integer: return std::to_string(v.as_int());
    case Value::Kind::floating: return py_float_repr(v.as_double());
    case Value::Kind::string: return v.as_string();
    case Value::Kind::function: return "<function " + v.undefined_name() + ">";
    case Value::Kind::namespace_: return "<Namespace>";
    default: return py_repr(v);
  }
}

Result<std::string> to_json(const Value& value, const JsonOptions& options) {
  std::string out;
  DS_TRY(json_value(value, options, 0, out));
  return out;
}

bool py_equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::undefined:
    case Value::Kind::none: return true;
    case Value::Kind::string: return a.as_string() == b.as_string();
    case Value::Kind::list: {
      if (a.as_list().size() != b.as_list().size()) return false;
      for (size_t i = 0; i < a.as_list().size(); ++i)
        if (!py_equal(a.as_list()[i], b.as_list()[i])) return false;
      return true;
    }
    case Value::Kind::dict: {
      if (a.as_dict().size() != b.as_dict().size()) return false;
      for (const auto& [k, v] : a.as_dict()) {
        const Value* other = b.find(k);
        if (!other || !py_equal(v, *other)) return false;
      }
      return true;
    }
    default: return &a == &b;
  }
}

Result<bool> py_less(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() < b.as_double();
    return a.as_int() < b.as_int();
  }
  if (a.is_string() && b.is_string()) {
    // Python compares code points; UTF-8 byte order is the same order.
    return a.as_string() < b.as_string();
  }
  if (a.is_list() && b.is_list()) {
    const List& x = a.as_list();
    const List& y = b.as_list();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (py_equal(x[i], y[i])) continue;
      return py_less(x[i], y[i]);
    }
    return x.size() < y.size();
  }
  return Status::errorf("'<' not supported between instances of '", a.type_name(), "' and '", b.type_name(), "'");
}

}  // namespace ds::jinja
