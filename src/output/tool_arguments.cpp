// Tool-call argument typing (see tool_arguments.h), after vLLM's Qwen3CoderToolParser
// (vllm/tool_parsers/qwen3coder_tool_parser.py, _get_arguments_config and _convert_param_value).
#include "output/tool_arguments.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>

namespace ds {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string_view trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  const size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(kSpace) - begin + 1);
}

bool starts_with_any(std::string_view text, std::initializer_list<std::string_view> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(), [&](std::string_view p) { return text.starts_with(p); });
}

bool is_one_of(std::string_view text, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), text) != names.end();
}

bool all_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Python int(): optional sign, decimal digits (underscores and other bases are not taken).
nlohmann::ordered_json parse_integer(std::string_view text) {
  std::string_view t = trim(text);
  bool negative = false;
  if (!t.empty() && (t[0] == '+' || t[0] == '-')) {
    negative = t[0] == '-';
    t.remove_prefix(1);
  }
  if (!all_digits(t)) return nlohmann::ordered_json(nlohmann::ordered_json::value_t::discarded);
  uint64_t magnitude = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), magnitude);
  if (ec != std::errc() || end != t.data() + t.size()) return nlohmann::ordered_json(nlohmann::ordered_json::value_t::discarded);
  if (!negative) return magnitude;
  if (magnitude > static_cast<uint64_t>(INT64_MAX) + 1) return nlohmann::ordered_json(nlohmann::ordered_json::value_t::discarded);
  return magnitude == static_cast<uint64_t>(INT64_MAX) + 1 ? INT64_MIN : -static_cast<int64_t>(magnitude);
}

// Python float() on decimal text: [+-] (digits [. digits] | . digits) [e [+-] digits].
nlohmann::ordered_json parse_number(std::string_view text) {
  const auto discarded = nlohmann::ordered_json(nlohmann::ordered_json::value_t::discarded);
  std::string_view t = trim(text);
  if (!t.empty() && t[0] == '+') t.remove_prefix(1);
  std::string_view body = t;
  if (!body.empty() && body[0] == '-') body.remove_prefix(1);
  const size_t exp = body.find_first_of("eE");
  const std::string_view mantissa = body.substr(0, exp);
  const size_t dot = mantissa.find('.');
  const std::string_view whole = mantissa.substr(0, dot);
  const std::string_view frac = dot == std::string_view::npos ? std::string_view() : mantissa.substr(dot + 1);
  const bool mantissa_ok = (all_digits(whole) || whole.empty()) && (all_digits(frac) || frac.empty()) &&
                           !(whole.empty() && frac.empty());
  if (!mantissa_ok) return discarded;
  if (exp != std::string_view::npos) {
    std::string_view e = body.substr(exp + 1);
    if (!e.empty() && (e[0] == '+' || e[0] == '-')) e.remove_prefix(1);
    if (!all_digits(e)) return discarded;
  }
  double value = 0.0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (ec != std::errc() || end != t.data() + t.size() || !std::isfinite(value)) return discarded;
  if (value == std::trunc(value) && std::fabs(value) < 9.0e18) return static_cast<int64_t>(value);
  return value;
}

nlohmann::ordered_json json_or_string(std::string_view value) {
  nlohmann::ordered_json parsed = parse_json_value(value);
  if (parsed.is_discarded()) return std::string(value);
  return parsed;
}

}  // namespace

ToolSchemas::ToolSchemas(const nlohmann::json& tools) {
  if (!tools.is_array()) return;
  for (const nlohmann::json& tool : tools) {
    if (!tool.is_object()) continue;
    const auto function = tool.find("function");
    if (function == tool.end() || !function->is_object()) continue;
    const auto name = function->find("name");
    if (name == function->end() || !name->is_string()) continue;
    nlohmann::json properties = nlohmann::json::object();
    const auto parameters = function->find("parameters");
    if (parameters != function->end() && parameters->is_object()) {
      const auto props = parameters->find("properties");
      if (props != parameters->end() && props->is_object()) properties = *props;
    }
    properties_.emplace(name->get<std::string>(), std::move(properties));  // first definition wins
  }
}

const nlohmann::json* ToolSchemas::parameter(std::string_view function, std::string_view parameter) const {
  const auto it = properties_.find(function);
  if (it == properties_.end()) return nullptr;
  const auto param = it->second.find(std::string(parameter));
  return param == it->second.end() ? nullptr : &*param;
}

std::string schema_type_name(const nlohmann::json& schema) {
  if (!schema.is_object()) return "string";
  const auto type = schema.find("type");
  if (type != schema.end()) {
    if (type->is_string()) return lower(trim(type->get_ref<const std::string&>()));
    if (type->is_array()) {
      for (const nlohmann::json& t : *type) {
        if (t.is_string() && lower(trim(t.get_ref<const std::string&>())) != "null") {
          return lower(trim(t.get_ref<const std::string&>()));
        }
      }
      return "null";
    }
  }
  if (schema.contains("anyOf") || schema.contains("oneOf")) return "object";
  return "string";
}

nlohmann::ordered_json parse_json_value(std::string_view text) {
  const auto discarded = nlohmann::ordered_json(nlohmann::ordered_json::value_t::discarded);
  // Nesting depth outside strings; a quick linear pass before the real parser.
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > 64) return discarded;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  nlohmann::ordered_json value = nlohmann::ordered_json::parse(text.begin(), text.end(), nullptr, false);
  if (value.is_number_float() && !std::isfinite(value.get<double>())) return discarded;
  return value;
}

nlohmann::ordered_json typed_parameter_value(std::string_view value, const nlohmann::json* schema) {
  if (lower(value) == "null") return nullptr;
  if (schema == nullptr) return json_or_string(value);
  const std::string type = schema_type_name(*schema);
  if (is_one_of(type, {"string", "str", "text", "varchar", "char", "enum"})) return std::string(value);
  nlohmann::ordered_json typed(nlohmann::ordered_json::value_t::discarded);
  if (starts_with_any(type, {"int", "uint", "long", "short", "unsigned"})) {
    typed = parse_integer(value);
  } else if (starts_with_any(type, {"num", "float"})) {
    typed = parse_number(value);
  } else if (is_one_of(type, {"boolean", "bool", "binary"})) {
    const std::string word = lower(trim(value));
    if (word == "true" || word == "false") typed = word == "true";
  } else {
    return json_or_string(value);  // object/array/dict/list and anything else
  }
  if (typed.is_discarded()) return std::string(value);
  return typed;
}

}  // namespace ds
