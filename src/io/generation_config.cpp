// GenerationConfig from generation_config.json (JsonReader: every value type-checked, errors name the
// key) or from a GGUF file's general.sampling.* keys; both checked against a request's ranges.
#include "io/generation_config.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "io/gguf_set.h"
#include "io/json_reader.h"
#include "util/str_cat.h"

namespace ds {
namespace {

// A default must be what a request could ask for (server/openai_request.cpp's ranges).
Status check_sampling_defaults(const GenerationConfig& g, const std::string& source) {
  auto in_range = [&](const char* key, const std::optional<double>& v, double lo, double hi, bool lo_open) -> Status {
    if (!v) return {};
    if (!std::isfinite(*v) || *v < lo || *v > hi || (lo_open && *v == lo))
      return Status::errorf(source, ": ", key, ": expected a number in ", lo_open ? "(" : "[", lo, ", ", hi, "], found ", *v);
    return {};
  };
  DS_TRY(in_range("temperature", g.temperature, 0.0, 1e6, false));
  DS_TRY(in_range("top_p", g.top_p, 0.0, 1.0, true));
  DS_TRY(in_range("min_p", g.min_p, 0.0, 1.0, false));
  DS_TRY(in_range("repetition_penalty", g.repetition_penalty, 1e-6, 1e6, false));
  if (g.top_k && (*g.top_k < -1 || *g.top_k > (int64_t{1} << 30)))
    return Status::errorf(source, ": top_k: expected an integer in [-1, ", int64_t{1} << 30, "], found ", *g.top_k);
  return {};
}

// The converter's keys (gguf-py Keys.General.SAMPLING_*) for the defaults deltaserve samples with.
constexpr const char* kGgufTemperature = "general.sampling.temp";
constexpr const char* kGgufTopK = "general.sampling.top_k";
constexpr const char* kGgufTopP = "general.sampling.top_p";
constexpr const char* kGgufMinP = "general.sampling.min_p";
constexpr const char* kGgufRepetitionPenalty = "general.sampling.penalty_repeat";

}  // namespace

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
  DS_TRY(check_sampling_defaults(g, source));
  return g;
}

Result<GenerationConfig> gguf_generation_config(const GgufFile& gguf, const std::string& label) {
  GenerationConfig g;
  auto number = [&](const char* key, std::optional<double>& out) -> Status {
    const GgufEntry* e = gguf.find(key);
    if (e == nullptr) return {};
    DS_ASSIGN_OR_RETURN(out, e->number());
    return {};
  };
  DS_TRY(number(kGgufTemperature, g.temperature).with_context(label));
  DS_TRY(number(kGgufTopP, g.top_p).with_context(label));
  DS_TRY(number(kGgufMinP, g.min_p).with_context(label));
  DS_TRY(number(kGgufRepetitionPenalty, g.repetition_penalty).with_context(label));
  if (const GgufEntry* e = gguf.find(kGgufTopK)) {
    auto top_k = e->integer();
    if (!top_k.ok()) return top_k.status().with_context(label);
    g.top_k = *top_k;
  }
  DS_TRY(check_sampling_defaults(g, label + " (general.sampling.*)"));
  return g;
}

void set_gguf_generation_config(const GenerationConfig& g, GgufMetadata& metadata) {
  if (g.top_k) metadata.set_number<int32_t>(kGgufTopK, static_cast<int32_t>(*g.top_k));
  if (g.top_p) metadata.set_number<float>(kGgufTopP, static_cast<float>(*g.top_p));
  if (g.min_p) metadata.set_number<float>(kGgufMinP, static_cast<float>(*g.min_p));
  if (g.temperature) metadata.set_number<float>(kGgufTemperature, static_cast<float>(*g.temperature));
  if (g.repetition_penalty) metadata.set_number<float>(kGgufRepetitionPenalty, static_cast<float>(*g.repetition_penalty));
}

Result<GenerationConfig> load_generation_config(const std::string& model) {
  if (model.ends_with(".gguf")) {
    DS_ASSIGN_OR_RETURN(const GgufSet set, GgufSet::open(model));
    return gguf_generation_config(set.metadata(), set.parts().front()->name);
  }
  const std::filesystem::path path = std::filesystem::path(model) / "generation_config.json";
  if (!std::filesystem::exists(path)) return GenerationConfig{};
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::errorf("cannot read ", path.string());
  std::stringstream text;
  text << in.rdbuf();
  return parse_generation_config(text.str(), "generation_config.json");
}

std::string sampling_defaults_text(const GenerationConfig& g) {
  std::string text;
  auto add = [&](const char* key, const std::optional<double>& v) {
    if (!v) return;
    char number[32];
    std::snprintf(number, sizeof(number), "%g", *v);  // six digits: a float32's 0.6 reads 0.6
    text += str_cat(text.empty() ? "" : ", ", key, " ", number);
  };
  add("temperature", g.temperature);
  if (g.top_k) text += str_cat(text.empty() ? "" : ", ", "top_k ", *g.top_k);
  add("top_p", g.top_p);
  add("min_p", g.min_p);
  add("repetition_penalty", g.repetition_penalty);
  return text.empty() ? "none" : text;
}

std::vector<int32_t> stop_token_ids(const TextConfig& config, const GenerationConfig& generation) {
  std::vector<int32_t> ids;
  for (const auto* list : {&config.eos_token_id, &generation.eos_token_id})
    for (int64_t id : *list)
      if (std::find(ids.begin(), ids.end(), static_cast<int32_t>(id)) == ids.end()) ids.push_back(static_cast<int32_t>(id));
  return ids;
}

}  // namespace ds
