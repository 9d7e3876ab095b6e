// tokenizer.ggml.* → tokenizer.json. Key names and token types: gguf-py constants.py (Keys.Tokenizer,
// TokenType); the JSON fields are those of the HF Qwen3.5 tokenizer.json (data/tokenizer/).
#include "tokenizer/gguf_tokenizer.h"

#include <filesystem>
#include <map>

#include "io/gguf_set.h"
#include "tokenizer/tokenizer_spec.h"
#include "tokenizer/utf8.h"

namespace ds {
namespace {

enum GgufTokenType : int64_t { kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6 };

Result<std::string_view> string_at(const GgufFile& gguf, const char* key, const std::string& label) {
  auto entry = gguf.require(key);
  if (!entry.ok()) return entry.status().with_context(label);
  return (*entry)->string();
}

}  // namespace

Result<GgufTokenizerFiles> gguf_tokenizer_files(const GgufFile& gguf, const std::string& label) {
  DS_ASSIGN_OR_RETURN(const std::string_view model, string_at(gguf, "tokenizer.ggml.model", label));
  if (model != "gpt2")
    return Status::errorf(label, ": tokenizer.ggml.model \"", model, "\" is not supported (expected \"gpt2\", byte-level BPE)");
  DS_ASSIGN_OR_RETURN(const std::string_view pre, string_at(gguf, "tokenizer.ggml.pre", label));
  if (pre != "qwen35")
    return Status::errorf(label, ": tokenizer.ggml.pre \"", pre, "\" is not supported (expected \"qwen35\", the Qwen3.5 pre-tokenizer)");
  DS_ASSIGN_OR_RETURN(const GgufEntry* tokens_entry, gguf.require("tokenizer.ggml.tokens"));
  DS_ASSIGN_OR_RETURN(const auto tokens, tokens_entry->string_list());
  DS_ASSIGN_OR_RETURN(const GgufEntry* types_entry, gguf.require("tokenizer.ggml.token_type"));
  DS_ASSIGN_OR_RETURN(const std::vector<int64_t> types, types_entry->integers());
  if (types.size() != tokens.size())
    return Status::errorf(label, ": tokenizer.ggml.token_type has ", types.size(), " entries, tokenizer.ggml.tokens ", tokens.size());
  DS_ASSIGN_OR_RETURN(const GgufEntry* merges_entry, gguf.require("tokenizer.ggml.merges"));
  DS_ASSIGN_OR_RETURN(const auto merges, merges_entry->string_list());
  // GGUF strings are UTF-8, and byte-level BPE symbols always are; the HF form is JSON, which holds
  // nothing else.
  for (const auto& [key, strings] : {std::pair{"tokenizer.ggml.tokens", &tokens}, std::pair{"tokenizer.ggml.merges", &merges}})
    for (size_t i = 0; i < strings->size(); ++i)
      if (const size_t valid = utf8::valid_prefix((*strings)[i]); valid != (*strings)[i].size())
        return Status::errorf(label, ": ", key, "[", i, "] is not valid UTF-8 (byte ", valid, " of ", (*strings)[i].size(),
                              "): expected the UTF-8 text of a byte-level BPE symbol");

  // nlohmann::json (std::map), not ordered_json: an ordered object finds keys by a linear scan, which
  // made a 248,320-token vocabulary take minutes to build.
  nlohmann::json vocab = nlohmann::json::object();
  nlohmann::json added = nlohmann::json::array();
  for (size_t id = 0; id < tokens.size(); ++id) {
    const std::string token(tokens[id]);
    switch (types[id]) {
      case kNormal: break;
      case kControl: case kUserDefined:
        added.push_back({{"id", id}, {"content", token}, {"single_word", false}, {"lstrip", false}, {"rstrip", false},
                         {"normalized", false}, {"special", types[id] == kControl}});
        break;
      case kUnused: continue;
      default:
        return Status::errorf(label, ": token ", id, " (\"", token, "\") has type ", types[id],
                              ", which a byte-level BPE vocabulary does not use (expected 1 normal, 3 control, 4 user "
                              "defined or 5 unused)");
    }
    if (vocab.contains(token)) return Status::errorf(label, ": token \"", token, "\" appears twice (ids ", vocab[token].get<int64_t>(), " and ", id, ")");
    vocab[token] = id;
  }
  nlohmann::json merge_list = nlohmann::json::array();
  for (size_t i = 0; i < merges.size(); ++i) {
    const size_t space = merges[i].find(' ');  // byte-level symbols never hold a space (it is "Ġ")
    if (space == std::string_view::npos || merges[i].find(' ', space + 1) != std::string_view::npos)
      return Status::errorf(label, ": tokenizer.ggml.merges[", i, "] = \"", merges[i], "\": expected two symbols split by one space");
    merge_list.push_back({std::string(merges[i].substr(0, space)), std::string(merges[i].substr(space + 1))});
  }
  const nlohmann::json byte_level = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false},
                                             {"use_regex", false}};
  nlohmann::json json = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", added},
      {"normalizer", {{"type", "NFC"}}},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"}, {"pattern", {{"Regex", kQwen35Regex}}}, {"behavior", "Isolated"}, {"invert", false}}, byte_level}}}},
      {"post_processor", byte_level},
      {"decoder", byte_level},
      {"model",
       {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"continuing_subword_prefix", ""},
        {"end_of_word_suffix", ""}, {"fuse_unk", false}, {"byte_fallback", false}, {"ignore_merges", false},
        {"vocab", vocab}, {"merges", merge_list}}},
  };

  GgufTokenizerFiles files;
  files.tokenizer_json = json.dump();
  files.special_tokens = nlohmann::ordered_json::object();
  for (auto [key, name] : {std::pair{"tokenizer.ggml.bos_token_id", "bos_token"}, std::pair{"tokenizer.ggml.eos_token_id", "eos_token"},
                           std::pair{"tokenizer.ggml.unknown_token_id", "unk_token"},
                           std::pair{"tokenizer.ggml.padding_token_id", "pad_token"}}) {
    const GgufEntry* entry = gguf.find(key);
    if (entry == nullptr) continue;
    DS_ASSIGN_OR_RETURN(const int64_t id, entry->integer());
    if (id < 0 || id >= static_cast<int64_t>(tokens.size()))
      return Status::errorf(label, ": ", key, " = ", id, ": expected an id below ", tokens.size());
    files.special_tokens[name] = std::string(tokens[static_cast<size_t>(id)]);
  }
  if (const GgufEntry* chat = gguf.find("tokenizer.chat_template")) {
    DS_ASSIGN_OR_RETURN(const std::string_view text, chat->string());
    files.chat_template = std::string(text);
  }
  return files;
}

namespace {

// json[key] when it is a string, else "" (nlohmann's value() throws on a wrong type).
std::string string_field(const nlohmann::json& json, const char* key) {
  return json.is_object() && json.contains(key) && json[key].is_string() ? json[key].get<std::string>() : std::string();
}
// json[key] when it is an array, else an empty array.
nlohmann::json array_field(const nlohmann::json& json, const char* key) {
  return json.is_object() && json.contains(key) && json[key].is_array() ? json[key] : nlohmann::json::array();
}

// A tokenizer_config.json special token: a string, {"content": ...}, or absent / null.
std::optional<std::string> special_token_text(const nlohmann::json& config, const char* key) {
  if (!config.contains(key)) return std::nullopt;
  const nlohmann::json& value = config[key];
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("content") && value["content"].is_string()) return value["content"].get<std::string>();
  return std::nullopt;
}

}  // namespace

Status set_gguf_tokenizer(const std::string& tokenizer_json, const std::string& tokenizer_config_json,
                          const std::string& chat_template, int64_t vocab_size, GgufMetadata& m) {
  const auto json = nlohmann::json::parse(tokenizer_json, nullptr, false);
  if (!json.is_object() || !json.contains("model") || string_field(json["model"], "type") != "BPE" ||
      !json["model"].contains("vocab") || !json["model"]["vocab"].is_object())
    return Status::errorf("tokenizer.json: a GGUF needs a BPE tokenizer with a vocabulary (model.type \"BPE\", model.vocab)");
  bool qwen35_split = false;
  if (json.contains("pre_tokenizer"))
    for (const auto& step : array_field(json["pre_tokenizer"], "pretokenizers"))
      if (string_field(step, "type") == "Split" && step.contains("pattern") && string_field(step["pattern"], "Regex") == kQwen35Regex)
        qwen35_split = true;
  if (!qwen35_split)
    return Status::errorf("tokenizer.json: expected the Qwen3.5 pre-tokenizer (a Split on its regex), the only one "
                          "tokenizer.ggml.pre \"qwen35\" names");

  std::vector<std::string> tokens(static_cast<size_t>(vocab_size));
  std::vector<int32_t> types(static_cast<size_t>(vocab_size), kUnused);
  auto place = [&](int64_t id, const std::string& token, GgufTokenType type) -> Status {
    if (id < 0 || id >= vocab_size)
      return Status::errorf("tokenizer.json: token \"", token, "\" has id ", id, ", outside the model's vocabulary of ", vocab_size);
    tokens[static_cast<size_t>(id)] = token;
    types[static_cast<size_t>(id)] = type;
    return {};
  };
  for (const auto& [token, id] : json["model"]["vocab"].items()) {
    if (!id.is_number_integer()) return Status::errorf("tokenizer.json: token \"", token, "\" has no integer id");
    DS_TRY(place(id.get<int64_t>(), token, kNormal));
  }
  for (const auto& added : array_field(json, "added_tokens")) {
    const std::string content = string_field(added, "content");
    if (!added.is_object() || !added.contains("id") || !added["id"].is_number_integer())
      return Status::errorf("tokenizer.json: added token \"", content, "\" has no integer id");
    const bool looks_special = content.starts_with("<|") && content.ends_with("|>");  // the converter's does_token_look_special
    DS_TRY(place(added["id"].get<int64_t>(), content, (added.contains("special") && added["special"] == true) || looks_special ? kControl : kUserDefined));
  }
  for (int64_t id = 0; id < vocab_size; ++id)
    if (types[static_cast<size_t>(id)] == kUnused) tokens[static_cast<size_t>(id)] = "[PAD" + std::to_string(id) + "]";

  std::vector<std::string> merges;
  for (const auto& merge : array_field(json["model"], "merges")) {
    if (merge.is_string()) {
      merges.push_back(merge.get<std::string>());
    } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string()) {
      merges.push_back(merge[0].get<std::string>() + " " + merge[1].get<std::string>());
    } else {
      return Status::errorf("tokenizer.json: model.merges[", merges.size(), "]: expected \"a b\" or [\"a\", \"b\"]");
    }
  }

  const auto config = nlohmann::json::parse(tokenizer_config_json, nullptr, false);
  if (!config.is_object()) return Status::errorf("tokenizer_config.json: expected a JSON object");
  std::map<std::string, int64_t> id_of;
  for (int64_t id = 0; id < vocab_size; ++id)
    if (types[static_cast<size_t>(id)] != kUnused) id_of.emplace(tokens[static_cast<size_t>(id)], id);

  m.set_string("tokenizer.ggml.model", "gpt2");
  m.set_string("tokenizer.ggml.pre", "qwen35");
  m.set_strings("tokenizer.ggml.tokens", std::move(tokens));
  m.set_array<int32_t>("tokenizer.ggml.token_type", types);
  if (!merges.empty()) m.set_strings("tokenizer.ggml.merges", std::move(merges));
  for (auto [key, name] : {std::pair{"bos_token", "tokenizer.ggml.bos_token_id"}, std::pair{"eos_token", "tokenizer.ggml.eos_token_id"},
                           std::pair{"unk_token", "tokenizer.ggml.unknown_token_id"},
                           std::pair{"pad_token", "tokenizer.ggml.padding_token_id"}}) {
    const std::optional<std::string> text = special_token_text(config, key);
    if (!text) continue;
    const auto id = id_of.find(*text);
    if (id == id_of.end()) return Status::errorf("tokenizer_config.json: ", key, " \"", *text, "\" is not a token of tokenizer.json");
    m.set_number<uint32_t>(name, static_cast<uint32_t>(id->second));
  }
  m.set_number<bool>("tokenizer.ggml.add_bos_token", config.contains("add_bos_token") && config["add_bos_token"] == true);
  m.set_number<bool>("tokenizer.ggml.add_eos_token", config.contains("add_eos_token") && config["add_eos_token"] == true);
  if (!chat_template.empty()) m.set_string("tokenizer.chat_template", chat_template);
  return {};
}

Result<GgufTokenizerFiles> load_gguf_tokenizer_files(const std::string& path) {
  DS_ASSIGN_OR_RETURN(const GgufSet set, GgufSet::open(path));
  return gguf_tokenizer_files(set.metadata(), std::filesystem::path(path).filename().string());
}

}  // namespace ds
