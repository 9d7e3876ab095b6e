// Tokenizer pipeline: validate UTF-8 -> added tokens (raw) -> NFC -> added tokens (normalized) ->
// regex splits -> byte-level BPE per piece; decode = ByteLevel decoder + lossy UTF-8, as in HF.
#include "tokenizer/tokenizer.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "io/json_reader.h"
#include "tokenizer/gguf_tokenizer.h"
#include "tokenizer/nfc.h"
#include "tokenizer/utf8.h"
#include "util/log.h"

namespace ds {
namespace {

Result<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::errorf("cannot read ", path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

bool is_qwen35_model_type(const std::string& type) {
  return type == "qwen3_5" || type == "qwen3_5_text" || type == "qwen3_5_moe" || type == "qwen3_5_moe_text";
}

}  // namespace

Result<Tokenizer> Tokenizer::load_dir(const std::string& dir) {
  if (dir.ends_with(".gguf")) {
    DS_ASSIGN_OR_RETURN(const GgufTokenizerFiles files, load_gguf_tokenizer_files(dir));
    return from_json(files.tokenizer_json, dir + " (tokenizer.ggml.* metadata)", TokenizerPipeline::qwen35);
  }
  const std::string path = (std::filesystem::path(dir) / "tokenizer.json").string();
  if (!std::filesystem::exists(path)) return Status::errorf("expected ", path, " (the checkpoint's tokenizer), found no such file");
  DS_ASSIGN_OR_RETURN(const std::string text, read_text_file(path));
  const std::string config_path = (std::filesystem::path(dir) / "config.json").string();
  TokenizerPipeline pipeline = TokenizerPipeline::as_written;
  if (std::filesystem::exists(config_path)) {
    DS_ASSIGN_OR_RETURN(const std::string config_text, read_text_file(config_path));
    DS_ASSIGN_OR_RETURN(const nlohmann::json config, JsonReader::parse(config_text, config_path));
    if (!config.is_object()) return Status::errorf(config_path, ": expected a JSON object, found ", config.type_name());
    DS_ASSIGN_OR_RETURN(const std::string model_type, JsonReader(config, config_path + ": ").get_string_or("model_type", ""));
    if (is_qwen35_model_type(model_type)) {
      pipeline = TokenizerPipeline::qwen35;
      log::debug("tokenizer: model_type ", model_type, ": NFC + the Qwen3.5 pre-tokenizer regex, as HF AutoTokenizer "
                 "(transformers 5.24.0, Qwen3_5Tokenizer) uses whatever tokenizer.json says");
    } else {
      log::info("tokenizer: model_type \"", model_type, "\" is not Qwen3.5: using ", path, " as written");
    }
  } else {
    log::info("tokenizer: no config.json in ", dir, ": using ", path, " as written");
  }
  return from_json(text, path, pipeline);
}

Result<Tokenizer> Tokenizer::from_json(std::string_view tokenizer_json, const std::string& source, TokenizerPipeline pipeline) {
  DS_ASSIGN_OR_RETURN(TokenizerSpec spec, parse_tokenizer_json(tokenizer_json, source));
  Tokenizer tokenizer;
  tokenizer.pipeline_ = pipeline;
  std::vector<std::string> regexes = spec.split_regexes;
  if (spec.byte_level_use_regex) regexes.emplace_back(kGpt2Regex);
  if (pipeline == TokenizerPipeline::qwen35) {
    const bool same = spec.nfc && regexes.size() == 1 && regexes[0] == kQwen35Regex;
    if (!same) log::info("tokenizer: ", source, " differs from the Qwen3.5 pipeline; using NFC + the Qwen3.5 regex as HF does for model_type qwen3_5");
    regexes = {kQwen35Regex};
    spec.nfc = true;
    spec.ignore_merges = false;  // Qwen3_5Tokenizer rebuilds BPE with its own options
  }
  tokenizer.nfc_ = spec.nfc;
  for (const std::string& regex : regexes) {
    DS_ASSIGN_OR_RETURN(RegexSplitter splitter, RegexSplitter::compile(regex));
    tokenizer.splitters_.push_back(std::move(splitter));
  }

  BpeModel::Vocab bpe_vocab;
  bpe_vocab.reserve(spec.vocab.size());
  int32_t limit = 0;
  for (const auto& [token, id] : spec.vocab) limit = std::max(limit, id + 1);
  for (const AddedToken& token : spec.added_tokens) limit = std::max(limit, token.id + 1);
  tokenizer.tokens_.resize(static_cast<size_t>(limit));
  for (auto& [token, id] : spec.vocab) {
    TokenInfo& info = tokenizer.tokens_[static_cast<size_t>(id)];
    if (info.known) return Status::errorf(source, ": model.vocab: expected unique ids, found id ", id, " twice");
    if (auto bytes = tokenizer.byte_map_.to_bytes(token); bytes && !bpe_vocab.emplace(std::move(*bytes), id).second)
      return Status::errorf(source, ": model.vocab: expected each token once, found \"", token, "\" twice");
    info = {std::move(token), true, false};
  }
  for (const AddedToken& token : spec.added_tokens) tokenizer.tokens_[static_cast<size_t>(token.id)] = {token.content, true, token.special};

  std::vector<std::pair<std::string, std::string>> merges;
  merges.reserve(spec.merges.size());
  for (size_t i = 0; i < spec.merges.size(); ++i) {
    auto left = tokenizer.byte_map_.to_bytes(spec.merges[i].first);
    auto right = tokenizer.byte_map_.to_bytes(spec.merges[i].second);
    if (!left || !right)
      return Status::errorf(source, ": model.merges[", i, "]: expected ByteLevel characters, found \"", spec.merges[i].first, " ",
                            spec.merges[i].second, "\"");
    merges.emplace_back(std::move(*left), std::move(*right));
  }
  auto bpe = BpeModel::build(std::move(bpe_vocab), merges, spec.ignore_merges);
  if (!bpe.ok()) return bpe.status().with_context(source + ": model.merges");
  tokenizer.bpe_ = std::make_unique<BpeModel>(std::move(*bpe));
  tokenizer.raw_added_ = AddedTokenMatcher(spec.added_tokens, false);
  tokenizer.normalized_added_ = AddedTokenMatcher(spec.added_tokens, true);
  log::debug("tokenizer: ", spec.vocab.size(), " vocabulary entries, ", merges.size(), " merges, ", spec.added_tokens.size(),
             " added tokens");
  return tokenizer;
}

void Tokenizer::encode_normalized(std::string_view text, std::vector<int32_t>& ids, std::vector<std::string_view>& pieces) const {
  pieces.clear();
  pieces.push_back(text);
  std::vector<std::string_view> next;
  for (const RegexSplitter& splitter : splitters_) {
    next.clear();
    for (const std::string_view piece : pieces) splitter.split(piece, next);
    pieces.swap(next);
  }
  for (const std::string_view piece : pieces) bpe_->encode_word(piece, ids);
}

Result<std::vector<int32_t>> Tokenizer::encode(std::string_view text) const {
  const size_t valid = utf8::valid_prefix(text);
  if (valid != text.size())
    return Status::errorf("expected UTF-8 text, found byte 0x", "0123456789abcdef"[static_cast<unsigned char>(text[valid]) >> 4],
                          "0123456789abcdef"[static_cast<unsigned char>(text[valid]) & 15], " at byte offset ", valid,
                          " that does not start or continue a valid sequence");
  std::vector<int32_t> ids;
  std::vector<Segment> segments, inner;
  std::vector<std::string_view> pieces;
  std::string normalized;
  raw_added_.split(text, segments);
  for (const Segment& segment : segments) {
    if (segment.added_id >= 0) {
      ids.push_back(segment.added_id);
      continue;
    }
    std::string_view body = segment.text;
    if (nfc_) {
      normalized.clear();
      DS_TRY(nfc_append(body, normalized));
      body = normalized;
    }
    inner.clear();
    if (normalized_added_.empty()) {
      inner.push_back({body, -1});
    } else {
      normalized_added_.split(body, inner);
    }
    for (const Segment& part : inner) {
      if (part.added_id >= 0) {
        ids.push_back(part.added_id);
      } else {
        encode_normalized(part.text, ids, pieces);
      }
    }
  }
  return ids;
}

bool Tokenizer::is_known(int32_t id) const { return id >= 0 && id < id_limit() && tokens_[static_cast<size_t>(id)].known; }
bool Tokenizer::is_special(int32_t id) const { return is_known(id) && tokens_[static_cast<size_t>(id)].special; }

std::string Tokenizer::token_bytes(int32_t id) const {
  if (!is_known(id)) return {};
  const std::string& text = tokens_[static_cast<size_t>(id)].text;
  auto bytes = byte_map_.to_bytes(text);
  return bytes ? std::move(*bytes) : text;
}

int32_t Tokenizer::token_to_id(std::string_view token) const {
  for (size_t id = 0; id < tokens_.size(); ++id)
    if (tokens_[id].known && tokens_[id].text == token) return static_cast<int32_t>(id);
  return -1;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special_tokens) const {
  std::string bytes;
  for (const int32_t id : ids) {
    if (!is_known(id) || (skip_special_tokens && is_special(id))) continue;
    bytes += token_bytes(id);
  }
  return utf8::lossy(bytes);
}

}  // namespace ds
