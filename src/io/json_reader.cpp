// JsonReader: strict typed reads; integers must be integers, booleans booleans.
#include "io/json_reader.h"

namespace ds {

using nlohmann::json;

Result<json> JsonReader::parse(const std::string& text, const std::string& source) {
  json value;
  try {
    value = json::parse(text);
  } catch (const json::exception& error) {  // parse_error carries the byte position
    return Status::errorf(source, ": not valid JSON (", error.what(), ")");
  }
  if (!value.is_object()) return Status::errorf(source, ": expected a JSON object, found ", value.type_name());
  return value;
}

bool JsonReader::has(const std::string& key) const { return object_.contains(key) && !object_.at(key).is_null(); }
bool JsonReader::is_null(const std::string& key) const { return object_.contains(key) && object_.at(key).is_null(); }

Status JsonReader::type_error(const std::string& key, const char* expected, const json& found) const {
  std::string text = found.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return Status::errorf(where(key), ": expected ", expected, ", found ", found.type_name(), " ", text);
}

Result<JsonReader> JsonReader::child(const std::string& key) const {
  if (!has(key)) return Status::errorf(where(key), ": missing (expected an object)");
  const json& value = object_.at(key);
  if (!value.is_object()) return type_error(key, "an object", value);
  return JsonReader(value, where(key) + ".");
}

Result<int64_t> JsonReader::as_int(const std::string& key, const json& value, int64_t min, int64_t max) const {
  int64_t number = 0;
  if (value.is_number_unsigned()) {
    const uint64_t unsigned_number = value.get<uint64_t>();
    if (unsigned_number > static_cast<uint64_t>(INT64_MAX))
      return Status::errorf(where(key), ": ", unsigned_number, " is outside the supported range [", min, ", ", max, "]");
    number = static_cast<int64_t>(unsigned_number);
  } else if (value.is_number_integer()) {
    number = value.get<int64_t>();
  } else {
    return type_error(key, "an integer", value);
  }
  if (number < min || number > max)
    return Status::errorf(where(key), ": ", number, " is outside the supported range [", min, ", ", max, "]");
  return number;
}

Result<int64_t> JsonReader::get_int(const std::string& key, int64_t min, int64_t max) const {
  if (!has(key)) return Status::errorf(where(key), ": missing (expected an integer)");
  return as_int(key, object_.at(key), min, max);
}

Result<int64_t> JsonReader::get_int_or(const std::string& key, int64_t fallback, int64_t min, int64_t max) const {
  return has(key) ? get_int(key, min, max) : Result<int64_t>(fallback);
}

Result<double> JsonReader::get_double(const std::string& key) const {
  if (!has(key)) return Status::errorf(where(key), ": missing (expected a number)");
  const json& value = object_.at(key);
  if (!value.is_number()) return type_error(key, "a number", value);
  return value.get<double>();
}

Result<double> JsonReader::get_double_or(const std::string& key, double fallback) const {
  return has(key) ? get_double(key) : Result<double>(fallback);
}

Result<bool> JsonReader::get_bool_or(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  const json& value = object_.at(key);
  if (!value.is_boolean()) return type_error(key, "true or false", value);
  return value.get<bool>();
}

Result<std::string> JsonReader::get_string(const std::string& key) const {
  if (!has(key)) return Status::errorf(where(key), ": missing (expected a string)");
  const json& value = object_.at(key);
  if (!value.is_string()) return type_error(key, "a string", value);
  return value.get<std::string>();
}

Result<std::string> JsonReader::get_string_or(const std::string& key, const std::string& fallback) const {
  return has(key) ? get_string(key) : Result<std::string>(fallback);
}

Result<std::vector<int64_t>> JsonReader::get_int_list(const std::string& key, int64_t min, int64_t max) const {
  if (!has(key)) return Status::errorf(where(key), ": missing (expected a list of integers)");
  const json& value = object_.at(key);
  if (!value.is_array()) return type_error(key, "a list of integers", value);
  std::vector<int64_t> numbers;
  for (size_t i = 0; i < value.size(); ++i) {
    DS_ASSIGN_OR_RETURN(const int64_t number, as_int(key + "[" + std::to_string(i) + "]", value[i], min, max));
    numbers.push_back(number);
  }
  return numbers;
}

Result<std::vector<std::string>> JsonReader::get_string_list(const std::string& key) const {
  if (!has(key)) return Status::errorf(where(key), ": missing (expected a list of strings)");
  const json& value = object_.at(key);
  if (!value.is_array()) return type_error(key, "a list of strings", value);
  std::vector<std::string> strings;
  for (size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_string()) return type_error(key + "[" + std::to_string(i) + "]", "a string", value[i]);
    strings.push_back(value[i].get<std::string>());
  }
  return strings;
}

Result<std::vector<int64_t>> JsonReader::get_int_or_int_list(const std::string& key) const {
  if (!has(key)) return std::vector<int64_t>{};
  const json& value = object_.at(key);
  if (value.is_array()) return get_int_list(key, 0, INT32_MAX);
  DS_ASSIGN_OR_RETURN(const int64_t number, as_int(key, value, 0, INT32_MAX));
  return std::vector<int64_t>{number};
}

}  // namespace ds
