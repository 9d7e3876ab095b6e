// tokenizer.ggml.* → tokenizer.json. Key names and token types: gguf-py constants.py (Keys.Tokenizer,
// TokenType); the JSON fields are those of the HF Qwen3.5 tokenizer.json (data/tokenizer/).
#include "tokenizer/gguf_tokenizer.h"

#include <filesystem>

#include "io/gguf_set.h"
#include "tokenizer/tokenizer_spec.h"

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

  nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
  nlohmann::ordered_json added = nlohmann::ordered_json::array();
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
  nlohmann::ordered_json merge_list = nlohmann::ordered_json::array();
  for (size_t i = 0; i < merges.size(); ++i) {
    const size_t space = merges[i].find(' ');  // byte-level symbols never hold a space (it is "Ġ")
    if (space == std::string_view::npos || merges[i].find(' ', space + 1) != std::string_view::npos)
      return Status::errorf(label, ": tokenizer.ggml.merges[", i, "] = \"", merges[i], "\": expected two symbols split by one space");
    merge_list.push_back({std::string(merges[i].substr(0, space)), std::string(merges[i].substr(space + 1))});
  }
  const nlohmann::ordered_json byte_level = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false},
                                             {"use_regex", false}};
  nlohmann::ordered_json json = {
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

Result<GgufTokenizerFiles> load_gguf_tokenizer_files(const std::string& path) {
  DS_ASSIGN_OR_RETURN(const GgufSet set, GgufSet::open(path));
  return gguf_tokenizer_files(set.metadata(), std::filesystem::path(path).filename().string());
}

}  // namespace ds
