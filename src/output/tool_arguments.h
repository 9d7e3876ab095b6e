// Tool-call argument typing: turns the text of a Qwen3.5 <parameter=…> into a JSON value guided by
// the tool's JSON schema, following vLLM's Qwen3CoderToolParser._convert_param_value conventions.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ds {

// The request's "tools" array, indexed by function name -> parameters.properties. Anything that
// is not shaped like an OpenAI function tool is skipped (the server validates the request first).
class ToolSchemas {
 public:
  explicit ToolSchemas(const nlohmann::json& tools);
  // The schema of one parameter of one function, nullptr if the function or parameter is unknown.
  const nlohmann::json* parameter(std::string_view function, std::string_view parameter) const;

 private:
  std::map<std::string, nlohmann::json, std::less<>> properties_;
};

// The JSON type name that decides the conversion: "type" lowercased; for a list of types the first
// one that is not "null"; "object" for anyOf/oneOf (as vLLM); "string" when the schema says nothing.
std::string schema_type_name(const nlohmann::json& schema);

// The value of one parameter (already stripped of the format's newlines):
//  - "null" in any case -> null, whatever the type (vLLM does this first too);
//  - string/str/text/varchar/char/enum -> the text verbatim;
//  - int*/uint*/long*/short*/unsigned* -> an integer when the whole text (spaces trimmed) is one;
//  - num*/float* -> a number: integral values become integers ("5.0" -> 5, as vLLM), non-finite
//    values stay strings (JSON has no inf/nan);
//  - boolean/bool/binary -> true/false for "true"/"false" in any case; anything else stays a string
//    (vLLM turns it into false; we keep the model's text rather than invent a value);
//  - object/array/arr/dict*/list* -> the parsed JSON when valid, else the string (vLLM also tries
//    Python's ast.literal_eval; we do not);
//  - any other type, an unknown parameter, or no schema (nullptr) -> the parsed JSON when the text
//    is valid JSON, else the string (vLLM keeps unknown parameters as strings; see
//    docs/output-parsing.md for why we differ).
// Text that fails its conversion always falls back to the verbatim string: nothing is lost.
nlohmann::ordered_json typed_parameter_value(std::string_view value, const nlohmann::json* schema);

// JSON parse that never throws and refuses nesting deeper than 64 (a hostile value could
// otherwise make dump() recurse deeply); std::nullopt-like: a discarded value on failure.
nlohmann::ordered_json parse_json_value(std::string_view text);

}  // namespace ds
