// GenerationConfig: the checkpoint's generation_config.json — its stop ids and default sampling
// values (HF GenerationConfig keys), used where a request leaves a value unset, as vLLM does. A GGUF
// file carries the same defaults as general.sampling.* keys, which llama.cpp's converter writes from
// the generation_config.json beside the model it converts (gguf-py's Metadata).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "io/gguf_file.h"
#include "io/gguf_writer.h"
#include "io/model_config.h"
#include "util/status.h"

namespace ds {

struct GenerationConfig {
  std::vector<int64_t> eos_token_id;  // may be several (Qwen3.5: <|im_end|> and <|endoftext|>)
  std::optional<double> temperature, top_p, min_p, repetition_penalty;
  std::optional<int64_t> top_k;
};

// Parses generation_config.json text; `source` names it in errors. A sampling default outside the
// range a request may ask for (temperature [0, 1e6], top_p (0, 1], top_k [-1, 2^30], min_p [0, 1],
// repetition_penalty [1e-6, 1e6]) is an error: it would apply to every request that leaves it unset.
Result<GenerationConfig> parse_generation_config(const std::string& text, const std::string& source);
// The sampling defaults of a GGUF file's general.sampling.* keys (temp, top_k, top_p, min_p,
// penalty_repeat; keys of samplers deltaserve lacks are not read), checked as above. A GGUF has no
// eos list here: its tokenizer's eos id reaches the model config. `label` names the file in errors.
Result<GenerationConfig> gguf_generation_config(const GgufFile& gguf, const std::string& label);
// The inverse, as the converter writes them: top_k as int32, the rest as float32, only those set.
void set_gguf_generation_config(const GenerationConfig& generation, GgufMetadata& metadata);
// The checkpoint's defaults: `model`/generation_config.json for a directory (a missing file is an
// empty config), general.sampling.* for a .gguf file (any part of a split set: part 1 holds them).
Result<GenerationConfig> load_generation_config(const std::string& model);
// What a config sets, for logs and `inspect` ("temperature 0.6, top_k 20, top_p 0.95"); "none" when
// it sets no sampling default.
std::string sampling_defaults_text(const GenerationConfig& generation);
// The ids that end a generation: config.json's eos_token_id and generation_config.json's, in order,
// without repeats.
std::vector<int32_t> stop_token_ids(const TextConfig& config, const GenerationConfig& generation);

}  // namespace ds
