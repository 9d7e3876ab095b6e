// SamplingParams: how one request turns logits into tokens and when it stops — the OpenAI / vLLM
// request fields, with vLLM's meanings and ranges.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "engine/stop_condition.h"
#include "util/status.h"

namespace ds {

inline constexpr int64_t kMaxLogprobs = 20;  // top alternatives per token (OpenAI's limit)

struct SamplingParams {
  float temperature = 0.0f;         // 0: greedy
  int64_t top_k = 0;                // 0 (or -1): off
  float top_p = 1.0f;               // 1: off
  float min_p = 0.0f;               // 0: off; keeps tokens with p ≥ min_p · p_max
  std::optional<uint64_t> seed;     // none: the engine draws one
  float presence_penalty = 0.0f;    // − once for every token already generated
  float frequency_penalty = 0.0f;   // − per occurrence in the generated tokens
  float repetition_penalty = 1.0f;  // HF/CTRL: divides positive (multiplies negative) logits of prompt and generated tokens
  int64_t max_tokens = 16;          // new tokens at most
  std::vector<int32_t> stop_token_ids;  // stop on these as well as on the model's end-of-sequence ids
  bool ignore_eos = false;          // do not stop on the model's end-of-sequence ids
  int64_t logprobs = -1;            // -1: none; 0: the chosen token's; k: and the k most likely alternatives
  // Stops the token ids cannot express (stop strings); stateful, so one per submitted request.
  std::shared_ptr<StopCondition> stop_condition;
};

// Checks ranges; the message names the field, the range and the value found.
Status validate_sampling(const SamplingParams& params);

}  // namespace ds
