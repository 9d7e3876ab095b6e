// The tokenizer of a GGUF model from its tokenizer.* metadata (what convert_hf_to_gguf.py wrote from
// the HF tokenizer), as the HF files it came from: tokenizer.json (BPE vocabulary and merges, added
// tokens), the named special tokens of tokenizer_config.json, and the chat template — so the
// existing, HF-exact tokenizer and template code read a GGUF model with no other file.
//
// Accepted: tokenizer.ggml.model "gpt2" (byte-level BPE) with tokenizer.ggml.pre "qwen35" (the
// Qwen3.5 pre-tokenizer; the pipeline is then TokenizerPipeline::qwen35, as for HF model_type qwen3_5).
// Token types: NORMAL tokens form the vocabulary; CONTROL tokens are special added tokens,
// USER_DEFINED ones non-special added tokens (llama.cpp writes both pre-normalised, so they are
// matched on the raw text, HF's normalized: false); UNUSED ids ([PADn]) are unknown ids.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "io/gguf_file.h"
#include "io/gguf_writer.h"
#include "util/status.h"

namespace ds {

struct GgufTokenizerFiles {
  std::string tokenizer_json;              // HF tokenizers' serialised form
  nlohmann::ordered_json special_tokens;   // bos_token, eos_token, pad_token, unk_token as present
  std::optional<std::string> chat_template;
};

// The inverse, for writing a GGUF: the tokenizer.* metadata of an HF Qwen3.5 tokenizer, as
// convert_hf_to_gguf.py writes it (_set_vocab_gpt2, SpecialVocab): `vocab_size` tokens, ids the
// tokenizer lacks as "[PADi]" (UNUSED); added tokens CONTROL when special or named <|…|>, else
// USER_DEFINED; the merges as "a b"; bos/eos/unk/padding ids from tokenizer_config.json; add_bos /
// add_eos (false unless tokenizer_config.json says otherwise); the chat template. An error if the
// tokenizer is not byte-level BPE with the Qwen3.5 pre-tokenizer, or names an id ≥ vocab_size.
// (The converter also round-trips non-normalised added tokens through the tokenizer; that is the
// identity for Qwen3.5's, so it is not repeated here.)
Status set_gguf_tokenizer(const std::string& tokenizer_json, const std::string& tokenizer_config_json,
                          const std::string& chat_template, int64_t vocab_size, GgufMetadata& metadata);

// `label` names the file in errors.
Result<GgufTokenizerFiles> gguf_tokenizer_files(const GgufFile& gguf, const std::string& label);
// Opens the GGUF model at `path` (a file or any part of a split set) for its metadata.
Result<GgufTokenizerFiles> load_gguf_tokenizer_files(const std::string& path);

}  // namespace ds
