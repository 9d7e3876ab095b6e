// Tokenizer: encode / decode with a byte-level BPE checkpoint tokenizer, exact to HF.
// Mirrors HF tokenizers' Tokenizer (added tokens, NFC, Split + ByteLevel, BPE, ByteLevel decoder) and
// transformers' AutoTokenizer choice of pipeline for model_type qwen3_5 (Qwen3_5Tokenizer).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/added_tokens.h"
#include "tokenizer/bpe_model.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/regex_splitter.h"
#include "tokenizer/tokenizer_spec.h"
#include "util/status.h"

namespace ds {

// Which normalizer / pre-tokenizer to run.
enum class TokenizerPipeline {
  as_written,  // tokenizer.json's own normalizer and pre-tokenizer (HF tokenizers.Tokenizer.from_file)
  qwen35,      // NFC + the Qwen3.5 regex + ByteLevel, whatever tokenizer.json says (transformers 5.24.0
               // Qwen3_5Tokenizer rebuilds its pipeline this way for model_type qwen3_5*)
};

class Tokenizer {
 public:
  // DIR/tokenizer.json; DIR/config.json's model_type chooses the pipeline as HF AutoTokenizer would
  // (qwen3_5, qwen3_5_text, qwen3_5_moe, qwen3_5_moe_text -> qwen35); without config.json the file is
  // used as written, and the log says so. A .gguf path: the file's tokenizer metadata (gguf_tokenizer.h).
  static Result<Tokenizer> load_dir(const std::string& dir);
  static Result<Tokenizer> from_json(std::string_view tokenizer_json, const std::string& source, TokenizerPipeline pipeline);

  // Text -> ids. Text that is not valid UTF-8 is an error naming the byte offset. Thread-safe.
  Result<std::vector<int32_t>> encode(std::string_view text) const;
  // Ids -> text as HF `decode`: unknown ids are skipped, special added tokens too if asked, bytes
  // that do not form UTF-8 become U+FFFD.
  std::string decode(std::span<const int32_t> ids, bool skip_special_tokens = false) const;

  // Raw bytes a token stands for (ByteLevel-decoded; the token's own UTF-8 if it has characters outside
  // the byte map, as HF's decoder does); empty for unknown ids.
  std::string token_bytes(int32_t id) const;
  bool is_known(int32_t id) const;
  bool is_special(int32_t id) const;
  // Id of an added token or vocabulary entry written as `token`; -1 if none.
  int32_t token_to_id(std::string_view token) const;
  // One past the largest id (vocabulary and added tokens).
  int32_t id_limit() const { return static_cast<int32_t>(tokens_.size()); }
  TokenizerPipeline pipeline() const { return pipeline_; }

 private:
  struct TokenInfo {
    std::string text;  // as written in tokenizer.json
    bool known = false;
    bool special = false;
  };
  Tokenizer() = default;
  void encode_normalized(std::string_view text, std::vector<int32_t>& ids, std::vector<std::string_view>& pieces) const;

  TokenizerPipeline pipeline_ = TokenizerPipeline::as_written;
  bool nfc_ = false;
  std::vector<RegexSplitter> splitters_;
  ByteLevelMap byte_map_;
  std::unique_ptr<BpeModel> bpe_;
  AddedTokenMatcher raw_added_;         // normalized == false: matched on the input text
  AddedTokenMatcher normalized_added_;  // normalized == true: matched after NFC
  std::vector<TokenInfo> tokens_;       // by id
};

}  // namespace ds
