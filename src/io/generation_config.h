// GenerationConfig: the checkpoint's generation_config.json — its stop ids and default sampling
// values (HF GenerationConfig keys), used where a request leaves a value unset, as vLLM does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "io/model_config.h"
#include "util/status.h"

namespace ds {

struct GenerationConfig {
  std::vector<int64_t> eos_token_id;  // may be several (Qwen3.5: <|im_end|> and <|endoftext|>)
  std::optional<double> temperature, top_p, min_p, repetition_penalty;
  std::optional<int64_t> top_k;
};

// Parses generation_config.json text; `source` names it in errors.
Result<GenerationConfig> parse_generation_config(const std::string& text, const std::string& source);
// Reads `dir`/generation_config.json; a missing file is an empty config.
Result<GenerationConfig> load_generation_config(const std::string& dir);
// The ids that end a generation: config.json's eos_token_id and generation_config.json's, in order,
// without repeats.
std::vector<int32_t> stop_token_ids(const TextConfig& config, const GenerationConfig& generation);

}  // namespace ds
