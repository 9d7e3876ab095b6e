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
#include "util/function_ref.h"
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
  // A token within reach of the draw: its logit / temperature and e^(that − the best's).
  struct Candidate {
    double scaled;
    double weight;
    int32_t token;
    int32_t band;  // most_likely()'s band of scaled logit
  };

  // `prompt`: the request's prompt (the repetition penalty covers it); `seed` replaces params.seed
  // when that is empty.
  Sampler(const SamplingParams& params, std::span<const int32_t> prompt, uint64_t seed);

  // Draws the next token and records it (penalties count generated tokens).
  SampledToken sample(std::span<const float> logits);

 private:
  std::span<const float> penalised(std::span<const float> logits);
  int32_t draw(std::span<const float> logits);
  int32_t draw_by_weight(std::span<const float> logits, double inv_t, double best, double floor);
  void top_k_candidates(std::span<const float> logits, size_t k, double inv_t, double floor);
  void fill_logprobs(std::span<const float> logits, SampledToken& out) const;
  // Bands of scaled logit below the best, `width` wide: how top-k and top-p find their cut.
  static constexpr size_t kBands = 1024;
  struct Bands {
    double best, width;
  };
  // Moves the smallest set of most likely candidates of candidates_[0, keep) for which
  // done(count, weight) holds to the front (in no particular order) and returns its size; its weight
  // in `mass`.
  size_t most_likely(size_t keep, const Bands& bands, FunctionRef<bool(size_t, double)> done, double& mass);

  SamplingParams params_;
  Xoshiro256 rng_;
  std::vector<int32_t> prompt_tokens_;                 // sorted, unique: the repetition penalty's prompt set
  std::unordered_map<int32_t, int32_t> output_counts_;  // generated token → occurrences
  std::vector<float> work_;                            // [vocab] penalised logits (reused)
  std::vector<Candidate> candidates_;  // reused
  std::vector<float> weights_;         // [vocab] draw_by_weight's, reused
  std::vector<double> block_sums_;     // [vocab / 1024] their sums by block, reused
  std::vector<size_t> band_counts_;    // [kBands], reused
  std::vector<double> band_weights_;   // [kBands], reused
};

// Index of the largest logit (the lowest index among equals).
int32_t argmax(std::span<const float> logits);

}  // namespace ds
