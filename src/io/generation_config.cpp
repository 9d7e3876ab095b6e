// GenerationConfig parsing with JsonReader (every value type-checked, errors name the key).
#include "io/generation_config.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "io/json_reader.h"

namespace ds {

Result<GenerationConfig> parse_generation_config(const std::string& text, const std::string& source) {
  DS_ASSIGN_OR_RETURN(const nlohmann::json json, JsonReader::parse(text, source));
  if (!json.is_object()) return Status::errorf(source, ": expected a JSON object, found ", json.type_name());
  const JsonReader reader(json, source + ": ");
  GenerationConfig g;
  DS_ASSIGN_OR_RETURN(g.eos_token_id, reader.get_int_or_int_list("eos_token_id"));
  for (int64_t id : g.eos_token_id)
    if (id < 0 || id > (int64_t{1} << 30)) return Status::errorf(reader.where("eos_token_id"), ": token id ", id, " is out of range");
  auto optional_double = [&](const char* key, std::optional<double>& out) -> Status {
    if (!reader.has(key) || json[key].is_null()) return {};
    DS_ASSIGN_OR_RETURN(out, reader.get_double(key));
    return {};
  };
  DS_TRY(optional_double("temperature", g.temperature));
  DS_TRY(optional_double("top_p", g.top_p));
  DS_TRY(optional_double("min_p", g.min_p));
  DS_TRY(optional_double("repetition_penalty", g.repetition_penalty));
  if (reader.has("top_k") && !json["top_k"].is_null()) {
    DS_ASSIGN_OR_RETURN(g.top_k, reader.get_int("top_k", -1, int64_t{1} << 30));
  }
  return g;
}

Result<GenerationConfig> load_generation_config(const std::string& dir) {
  const std::filesystem::path path = std::filesystem::path(dir) / "generation_config.json";
  if (!std::filesystem::exists(path)) return GenerationConfig{};
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::errorf("cannot read ", path.string());
  std::stringstream text;
  text << in.rdbuf();
  return parse_generation_config(text.str(), "generation_config.json");
}

std::vector<int32_t> stop_token_ids(const TextConfig& config, const GenerationConfig& generation) {
  std::vector<int32_t> ids;
  for (const auto* list : {&config.eos_token_id, &generation.eos_token_id})
    for (int64_t id : *list)
      if (std::find(ids.begin(), ids.end(), static_cast<int32_t>(id)) == ids.end()) ids.push_back(static_cast<int32_t>(id));
  return ids;
}

}  // namespace ds
