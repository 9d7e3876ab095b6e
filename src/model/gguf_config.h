// The model config of a GGUF file, from llama.cpp's `qwen35.*` metadata: what convert_hf_to_gguf.py
// wrote from config.json, read back into HF's names and checked by the same parser as config.json
// (io/model_config.h), so a GGUF model and its HF original get the same ModelConfig. Architecture
// `qwen35` (dense) only: `qwen35moe` and every other architecture are refused by name.
#pragma once

#include <cstdint>

#include "io/gguf_file.h"
#include "io/gguf_set.h"
#include "io/gguf_writer.h"
#include "io/model_config.h"
#include "util/status.h"

namespace ds {

inline constexpr const char* kGgufArchitecture = "qwen35";

// `vocab_size` and `tied` come from the tensors (token_embd rows; no output.weight); `label` names
// the file in errors.
Result<ModelConfig> gguf_model_config(const GgufFile& gguf, int64_t vocab_size, bool tied, const std::string& label);
// The same for a set of files, with the vocabulary and tying read from its tensors.
Result<ModelConfig> gguf_model_config(const GgufSet& set, const std::string& label);

// The inverse, for writing: general.architecture and the qwen35.* keys of `config`, as
// convert_hf_to_gguf.py writes them (same keys, types and order), so gguf_model_config reads back
// the same config (less what GGUF does not carry: eos from the tokenizer, vocab and tying from the
// tensors; rms_norm_eps and rope_theta as float32). `nextn_layers`: the MTP layers the file stores
// (the converter's block_count counts them, nextn_predict_layers says how many, and recurrent_layers
// marks them not recurrent); 0 for a file without the head, which then has no nextn key.
void set_gguf_model_config(const TextConfig& config, GgufMetadata& metadata, int64_t nextn_layers = 0);

}  // namespace ds
