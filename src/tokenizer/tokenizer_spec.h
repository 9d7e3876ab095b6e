// TokenizerSpec: what tokenizer.json says, parsed and checked (HF tokenizers' serialized Tokenizer:
// added_tokens, normalizer, pre_tokenizer, post_processor, decoder, model BPE).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/added_tokens.h"
#include "util/status.h"

namespace ds {

struct TokenizerSpec {
  std::vector<AddedToken> added_tokens;
  bool nfc = false;                        // normalizer NFC (or a Sequence of only NFC)
  std::vector<std::string> split_regexes;  // Split(Regex, Isolated) steps in order
  bool byte_level_use_regex = false;       // ByteLevel(use_regex=true) adds the GPT-2 split
  bool ignore_merges = false;
  std::vector<std::pair<std::string, int32_t>> vocab;  // as written (ByteLevel characters)
  std::vector<std::pair<std::string, std::string>> merges;
};

// Parses tokenizer.json text; `source` names it in errors. Anything this engine cannot reproduce
// exactly (other normalizers, Metaspace, byte fallback, unk tokens, ...) is an error naming the field.
Result<TokenizerSpec> parse_tokenizer_json(std::string_view text, const std::string& source);

// The Qwen3.5 pre-tokenizer regex (spec §7.1; transformers Qwen3_5Tokenizer.PRETOKENIZE_REGEX).
inline constexpr const char* kQwen35Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// tokenizers' ByteLevel(use_regex=true) pattern (GPT-2).
inline constexpr const char* kGpt2Regex = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

}  // namespace ds
