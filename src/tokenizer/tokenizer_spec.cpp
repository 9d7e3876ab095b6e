// tokenizer.json reader: accepts the byte-level BPE family HF writes for Qwen (and GPT-2-like files),
// merges as "a b" strings or [a, b] pairs, and rejects what it could not reproduce exactly.
#include "tokenizer/tokenizer_spec.h"

#include "io/json_reader.h"
#include "tokenizer/tokenizer_json_reader.h"

namespace ds {
namespace {

using nlohmann::json;

std::string type_of(const json& node) { return node.is_object() && node.contains("type") && node["type"].is_string() ? node["type"].get<std::string>() : "?"; }

Status parse_normalizer(const json& node, const std::string& where, TokenizerSpec& spec) {
  if (node.is_null()) return Status();
  const std::string type = type_of(node);
  if (type == "NFC") {
    spec.nfc = true;
    return Status();
  }
  if (type == "Sequence" && node.contains("normalizers") && node["normalizers"].is_array()) {
    for (const json& child : node["normalizers"]) DS_TRY(parse_normalizer(child, where + ".normalizers[]", spec));
    return Status();
  }
  return Status::errorf(where, ": expected null, NFC or a Sequence of NFC, found normalizer type \"", type, "\"");
}

Status parse_pre_tokenizer(const json& node, const std::string& where, TokenizerSpec& spec, bool& byte_level) {
  if (node.is_null()) return Status();
  const std::string type = type_of(node);
  if (type == "Sequence" && node.contains("pretokenizers") && node["pretokenizers"].is_array()) {
    for (const json& child : node["pretokenizers"])
      DS_TRY(parse_pre_tokenizer(child, where + ".pretokenizers[]", spec, byte_level));
    return Status();
  }
  if (byte_level) return Status::errorf(where, ": expected ByteLevel to be the last pre-tokenizer, found ", type, " after it");
  JsonReader reader(node, where + ".");
  if (type == "Split") {
    DS_ASSIGN_OR_RETURN(const JsonReader pattern, reader.child("pattern"));
    if (!pattern.has("Regex")) return Status::errorf(where, ".pattern: expected {\"Regex\": ...}, found a string pattern (unsupported)");
    DS_ASSIGN_OR_RETURN(std::string regex, pattern.get_string("Regex"));
    DS_ASSIGN_OR_RETURN(const std::string behavior, reader.get_string("behavior"));
    if (behavior != "Isolated") return Status::errorf(where, ".behavior: expected \"Isolated\", found \"", behavior, "\"");
    DS_ASSIGN_OR_RETURN(const bool invert, reader.get_bool_or("invert", false));
    if (invert) return Status::errorf(where, ".invert: expected false, found true");
    spec.split_regexes.push_back(std::move(regex));
    return Status();
  }
  if (type == "ByteLevel") {
    DS_ASSIGN_OR_RETURN(const bool prefix, reader.get_bool_or("add_prefix_space", false));
    if (prefix) return Status::errorf(where, ".add_prefix_space: expected false, found true (unsupported)");
    DS_ASSIGN_OR_RETURN(spec.byte_level_use_regex, reader.get_bool_or("use_regex", true));
    byte_level = true;
    return Status();
  }
  return Status::errorf(where, ": expected Sequence, Split or ByteLevel, found pre-tokenizer type \"", type, "\"");
}

Status parse_model(const json& node, const std::string& where, TokenizerJson& file, TokenizerSpec& spec) {
  if (type_of(node) != "BPE" && !(node.is_object() && !node.contains("type") && (node.contains("merges") || file.has_merges)))
    return Status::errorf(where, ": expected model type \"BPE\", found \"", type_of(node), "\"");
  JsonReader reader(node, where + ".");
  for (const char* key : {"unk_token", "dropout"})
    if (node.contains(key) && !node[key].is_null())
      return Status::errorf(where, ".", key, ": expected null, found ", node[key].dump().substr(0, 60), " (unsupported)");
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (node.contains(key) && !node[key].is_null() && node[key] != "")
      return Status::errorf(where, ".", key, ": expected null or \"\", found ", node[key].dump().substr(0, 60), " (unsupported)");
  DS_ASSIGN_OR_RETURN(const bool byte_fallback, reader.get_bool_or("byte_fallback", false));
  if (byte_fallback) return Status::errorf(where, ".byte_fallback: expected false, found true (unsupported)");
  DS_ASSIGN_OR_RETURN(spec.ignore_merges, reader.get_bool_or("ignore_merges", false));
  // The tables were read with the file (read_tokenizer_json); what is left here is a table of the wrong type.
  if (!file.has_vocab)
    return Status::errorf(where, ".vocab: expected an object {token: id}, found ", node.contains("vocab") ? node["vocab"].type_name() : "nothing");
  if (!file.has_merges)
    return Status::errorf(where, ".merges: expected an array, found ", node.contains("merges") ? node["merges"].type_name() : "nothing");
  spec.vocab = std::move(file.vocab);
  spec.merges = std::move(file.merges);
  return Status();
}

Status parse_added_tokens(const json& node, const std::string& where, TokenizerSpec& spec) {
  if (node.is_null()) return Status();
  if (!node.is_array()) return Status::errorf(where, ": expected an array, found ", node.type_name());
  for (size_t i = 0; i < node.size(); ++i) {
    if (!node[i].is_object()) return Status::errorf(where, "[", i, "]: expected an object, found ", node[i].type_name());
    JsonReader reader(node[i], str_cat(where, "[", i, "]."));
    AddedToken token;
    DS_ASSIGN_OR_RETURN(const int64_t id, reader.get_int("id", 0, (int64_t{1} << 24) - 1));
    token.id = static_cast<int32_t>(id);
    DS_ASSIGN_OR_RETURN(token.content, reader.get_string("content"));
    if (token.content.empty()) return Status::errorf(where, "[", i, "].content: expected a non-empty string, found \"\"");
    DS_ASSIGN_OR_RETURN(token.special, reader.get_bool_or("special", false));
    DS_ASSIGN_OR_RETURN(token.lstrip, reader.get_bool_or("lstrip", false));
    DS_ASSIGN_OR_RETURN(token.rstrip, reader.get_bool_or("rstrip", false));
    DS_ASSIGN_OR_RETURN(token.single_word, reader.get_bool_or("single_word", false));
    DS_ASSIGN_OR_RETURN(token.normalized, reader.get_bool_or("normalized", !token.special));
    spec.added_tokens.push_back(std::move(token));
  }
  return Status();
}

}  // namespace

Result<TokenizerSpec> parse_tokenizer_json(std::string_view text, const std::string& source) {
  DS_ASSIGN_OR_RETURN(TokenizerJson file, read_tokenizer_json(text, source));
  const json& root = file.rest;
  if (!root.is_object()) return Status::errorf(source, ": expected a JSON object, found ", root.type_name());
  TokenizerSpec spec;
  auto field = [&](const char* key) -> const json& {
    static const json kNull;  // a constant, not state
    return root.contains(key) ? root[key] : kNull;
  };
  DS_TRY(parse_added_tokens(field("added_tokens"), source + ": added_tokens", spec));
  DS_TRY(parse_normalizer(field("normalizer"), source + ": normalizer", spec));
  bool byte_level = false;
  DS_TRY(parse_pre_tokenizer(field("pre_tokenizer"), source + ": pre_tokenizer", spec, byte_level));
  if (!byte_level) return Status::errorf(source, ": pre_tokenizer: expected a ByteLevel step (byte-level BPE), found none");
  const json& post = field("post_processor");
  if (!post.is_null() && type_of(post) != "ByteLevel")
    return Status::errorf(source, ": post_processor: expected null or ByteLevel, found \"", type_of(post), "\" (unsupported)");
  const json& decoder = field("decoder");
  if (type_of(decoder) != "ByteLevel")
    return Status::errorf(source, ": decoder: expected ByteLevel, found ", decoder.is_null() ? "null" : "\"" + type_of(decoder) + "\"");
  if (!root.contains("model")) return Status::errorf(source, ": model: expected an object, found nothing");
  DS_TRY(parse_model(root["model"], source + ": model", file, spec));
  return spec;
}

}  // namespace ds
