// Sampler: the next token from a row of logits — greedy (temperature 0) or temperature / top-k /
// top-p sampling with a seeded generator (HF order: temperature, then top-k, then top-p).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "util/random.h"
#include "util/status.h"

namespace ds {

struct SamplingParams {
  float temperature = 0.0f;  // 0: greedy
  int64_t top_k = 0;         // 0: off
  float top_p = 1.0f;        // 1: off
  uint64_t seed = 0;
};

Status validate_sampling(const SamplingParams& params);

class Sampler {
 public:
  explicit Sampler(const SamplingParams& params) : params_(params), rng_(params.seed) {}
  int32_t sample(std::span<const float> logits);

 private:
  SamplingParams params_;
  Xoshiro256 rng_;
  std::vector<std::pair<float, int32_t>> candidates_;  // reused across calls
};

// Index of the largest logit (the lowest index among equals).
int32_t argmax(std::span<const float> logits);

}  // namespace ds
