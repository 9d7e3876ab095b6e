// Sampler: one request's next token from a row of logits, in vLLM's order — penalties
// (repetition, frequency, presence), temperature, min_p, top_k, top_p, then a draw from the
// request's own seeded generator (so a request samples the same tokens whatever batch it is in).
// Logprobs are those of the model's distribution (log-softmax of the raw logits), as vLLM reports.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/sampling_params.h"
#include "util/random.h"

namespace ds {

struct TokenLogprob {
  int32_t token = 0;
  float logprob = 0.0f;
};

struct SampledToken {
  int32_t token = 0;
  float logprob = 0.0f;             // set when logprobs >= 0
  std::vector<TokenLogprob> top;    // the `logprobs` most likely tokens, most likely first
};

class Sampler {
 public:
  // `prompt`: the request's prompt (the repetition penalty covers it); `seed` replaces params.seed
  // when that is empty.
  Sampler(const SamplingParams& params, std::span<const int32_t> prompt, uint64_t seed);

  // Draws the next token and records it (penalties count generated tokens).
  SampledToken sample(std::span<const float> logits);

 private:
  std::span<const float> penalised(std::span<const float> logits);
  int32_t draw(std::span<const float> logits);
  void fill_logprobs(std::span<const float> logits, SampledToken& out) const;

  SamplingParams params_;
  Xoshiro256 rng_;
  std::vector<int32_t> prompt_tokens_;                 // sorted, unique: the repetition penalty's prompt set
  std::unordered_map<int32_t, int32_t> output_counts_;  // generated token → occurrences
  std::vector<float> work_;                            // [vocab] penalised logits (reused)
  std::vector<std::pair<float, int32_t>> candidates_;  // (scaled logit, token), reused
  std::vector<double> weights_;                        // candidate probabilities (unnormalised)
};

// Index of the largest logit (the lowest index among equals).
int32_t argmax(std::span<const float> logits);

}  // namespace ds
