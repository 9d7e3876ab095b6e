// JsonReader: typed access to one JSON object with its path kept for error messages
// ("config.json: text_config.hidden_size: expected an integer, found string \"x\"").
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace ds {

class JsonReader {
 public:
  // Parses `text`; `source` names it in errors ("config.json").
  static Result<nlohmann::json> parse(const std::string& text, const std::string& source);
  // `object` must outlive the reader.
  JsonReader(const nlohmann::json& object, std::string path) : object_(object), path_(std::move(path)) {}

  bool has(const std::string& key) const;  // present and not null
  bool is_null(const std::string& key) const;  // present and null
  Result<JsonReader> child(const std::string& key) const;  // required nested object

  Result<int64_t> get_int(const std::string& key, int64_t min, int64_t max) const;
  Result<int64_t> get_int_or(const std::string& key, int64_t fallback, int64_t min, int64_t max) const;
  Result<double> get_double(const std::string& key) const;
  Result<double> get_double_or(const std::string& key, double fallback) const;
  Result<bool> get_bool_or(const std::string& key, bool fallback) const;
  Result<std::string> get_string(const std::string& key) const;
  Result<std::string> get_string_or(const std::string& key, const std::string& fallback) const;
  Result<std::vector<int64_t>> get_int_list(const std::string& key, int64_t min, int64_t max) const;
  Result<std::vector<std::string>> get_string_list(const std::string& key) const;
  // An int or a list of ints (eos_token_id); absent or null -> empty.
  Result<std::vector<int64_t>> get_int_or_int_list(const std::string& key) const;

  const std::string& path() const { return path_; }
  std::string where(const std::string& key) const { return path_ + key; }

 private:
  Status type_error(const std::string& key, const char* expected, const nlohmann::json& found) const;
  Result<int64_t> as_int(const std::string& key, const nlohmann::json& value, int64_t min, int64_t max) const;

  const nlohmann::json& object_;
  std::string path_;  // "config.json: text_config." — prefix for keys
};

}  // namespace ds
