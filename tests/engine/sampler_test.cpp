// Sampler tests: greedy, seeded reproducibility, the distribution a draw follows, top-k / top-p /
// min_p candidate sets, vLLM-style penalties, logprobs, and validation messages.
#include "engine/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "util/random.h"

namespace ds {
namespace {

std::map<int32_t, int> histogram(const SamplingParams& params, const std::vector<float>& logits, int draws) {
  Sampler sampler(params, {}, 1);
  std::map<int32_t, int> counts;
  for (int i = 0; i < draws; ++i) {
    // A fresh sampler per draw would repeat one draw; one sampler with no penalties is memoryless.
    ++counts[sampler.sample(logits).token];
  }
  return counts;
}

TEST(Sampler, GreedyTakesTheFirstLargest) {
  SamplingParams params;
  Sampler sampler(params, {}, 0);
  EXPECT_EQ(sampler.sample(std::vector<float>{0.5f, 2.0f, 2.0f, -1.0f}).token, 1);
}

TEST(Sampler, SameSeedSameTokens) {
  SamplingParams params;
  params.temperature = 1.0f;
  const std::vector<float> logits{0.1f, 0.2f, 0.3f, 0.4f, 0.5f};
  auto run = [&](uint64_t seed) {
    SamplingParams p = params;
    p.seed = seed;
    Sampler sampler(p, {}, 0);
    std::vector<int32_t> tokens;
    for (int i = 0; i < 64; ++i) tokens.push_back(sampler.sample(logits).token);
    return tokens;
  };
  EXPECT_EQ(run(5), run(5));
  EXPECT_NE(run(5), run(6));
}

TEST(Sampler, DrawsFollowTheSoftmax) {
  SamplingParams params;
  params.temperature = 1.0f;
  const auto counts = histogram(params, {0.0f, std::log(3.0f)}, 8000);
  EXPECT_NEAR(counts.at(1) / 8000.0, 0.75, 0.025);
  params.temperature = 0.5f;  // p ∝ 9 : 1
  const auto sharp = histogram(params, {0.0f, std::log(3.0f)}, 8000);
  EXPECT_NEAR(sharp.at(1) / 8000.0, 0.9, 0.02);
}

TEST(Sampler, TopKTopPMinPRestrictTheCandidates) {
  const std::vector<float> logits{std::log(0.5f), std::log(0.3f), std::log(0.2f)};
  SamplingParams params;
  params.temperature = 1.0f;
  params.top_k = 1;
  EXPECT_EQ(histogram(params, logits, 500).size(), 1u);
  params.top_k = 0;
  params.top_p = 0.6f;  // 0.5 < 0.6 ≤ 0.8: tokens 0 and 1, in ratio 5 : 3
  auto counts = histogram(params, logits, 8000);
  EXPECT_EQ(counts.count(2), 0u);
  EXPECT_NEAR(counts.at(0) / 8000.0, 0.625, 0.025);
  params.top_p = 1.0f;
  params.min_p = 0.5f;  // keeps p ≥ 0.25
  counts = histogram(params, logits, 2000);
  EXPECT_EQ(counts.count(2), 0u);
  EXPECT_EQ(counts.size(), 2u);
}

// The cuts over a large vocabulary, against their definition on a fully sorted one: top-k keeps the
// k highest logits (lower ids first among equals), top-p the smallest prefix of what is left whose
// renormalised mass reaches p; every draw falls in that set, and its frequent tokens come up as often
// as their probability says.
std::vector<double> kept_distribution(const std::vector<float>& logits, double temperature, int64_t top_k, double top_p) {
  std::vector<int32_t> order(logits.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  size_t keep = top_k > 0 ? std::min(order.size(), static_cast<size_t>(top_k)) : order.size();
  const double best = logits[order[0]] / temperature;
  std::vector<double> weight(keep);
  double total = 0.0;
  for (size_t i = 0; i < keep; ++i) total += weight[i] = std::exp(logits[order[i]] / temperature - best);
  double mass = 0.0;
  for (size_t i = 0; i < keep; ++i) {
    mass += weight[i];
    if (mass >= top_p * total) {
      keep = i + 1;
      break;
    }
  }
  std::vector<double> p(logits.size(), 0.0);
  for (size_t i = 0; i < keep; ++i) p[static_cast<size_t>(order[i])] = weight[i] / mass;
  return p;
}

TEST(Sampler, CutsOverALargeVocabularyFollowTheirDefinition) {
  Xoshiro256 rng(3);
  std::vector<float> logits(5000);
  for (float& l : logits) l = static_cast<float>(static_cast<double>(rng.next() >> 11) * 0x1p-53 * 12.0);
  for (int i = 0; i < 8; ++i) logits[static_cast<size_t>(rng.next() % logits.size())] += 9.0f;
  struct Case {
    float temperature;
    int64_t top_k;
    float top_p;
  };
  // A top-k by the heap, top-p alone, top-k alone, a tight top-p, and temperature alone (every token
  // weighed, the walk over blocks of 1,024).
  for (const Case c : {Case{0.8f, 50, 0.9f}, Case{1.0f, 0, 0.3f}, Case{0.7f, 5, 1.0f}, Case{1.5f, 0, 0.05f},
                       Case{1.2f, 0, 1.0f}}) {
    SamplingParams params;
    params.temperature = c.temperature;
    params.top_k = c.top_k;
    params.top_p = c.top_p;
    const std::vector<double> want = kept_distribution(logits, c.temperature, c.top_k, c.top_p);
    const int draws = 10000;
    const auto counts = histogram(params, logits, draws);
    for (const auto& [token, count] : counts)
      EXPECT_GT(want[static_cast<size_t>(token)], 0.0) << "token " << token << " drawn outside the cut";
    for (size_t token = 0; token < want.size(); ++token)
      if (want[token] > 0.02) {
        const auto it = counts.find(static_cast<int32_t>(token));
        const double seen = it == counts.end() ? 0.0 : it->second / double(draws);
        EXPECT_NEAR(seen, want[token], 0.02) << "token " << token << ", T " << c.temperature << ", k " << c.top_k;
      }
  }
}

TEST(Sampler, TopKAmongEqualLogitsKeepsTheLowestIds) {
  SamplingParams params;
  params.temperature = 1.0f;
  params.top_k = 3;
  const auto counts = histogram(params, std::vector<float>(1000, 0.5f), 600);
  ASSERT_EQ(counts.size(), 3u);
  EXPECT_TRUE(counts.count(0) && counts.count(1) && counts.count(2));
}

TEST(Sampler, NonFiniteLogitsAndDegenerateCutsStillDrawATokenOfTheirs) {
  SamplingParams params;
  params.temperature = 0.8f;
  params.top_k = 2;
  params.top_p = 0.5f;
  const float inf = INFINITY, nan = NAN;
  // An infinite logit takes all the mass; NaN is never drawn; all −∞ falls back to the first token.
  EXPECT_EQ(Sampler(params, {}, 1).sample(std::vector<float>{0.0f, inf, 1.0f, inf}).token, 1);
  EXPECT_EQ(Sampler(params, {}, 1).sample(std::vector<float>{nan, -inf, 2.0f, nan}).token, 2);
  EXPECT_EQ(Sampler(params, {}, 1).sample(std::vector<float>{-inf, -inf, -inf}).token, 0);
  SamplingParams plain;  // temperature alone: its own path
  plain.temperature = 1.0f;
  EXPECT_EQ(Sampler(plain, {}, 1).sample(std::vector<float>{0.0f, inf, 1.0f, inf}).token, 1);
  std::vector<float> one_finite(3000, nan);  // past the first block of 1,024
  one_finite[2500] = -inf;
  one_finite[2999] = 5.0f;
  for (int seed = 0; seed < 20; ++seed) EXPECT_EQ(Sampler(plain, {}, seed).sample(one_finite).token, 2999);
  EXPECT_EQ(Sampler(plain, {}, 1).sample(std::vector<float>{-inf, -inf, -inf}).token, 0);
  params.top_p = 1.0f;
  params.min_p = 1.0f;  // keeps only the best (two of them): bands of no width
  EXPECT_EQ(histogram(params, {0.5f, 3.0f, 3.0f, 1.0f}, 200).size(), 2u);
}

TEST(Sampler, PenaltiesFollowVllm) {
  SamplingParams params;
  params.repetition_penalty = 2.0f;
  // Token 1 is in the prompt: 2.0 / 2 = 1.0 < 1.5.
  EXPECT_EQ(Sampler(params, std::vector<int32_t>{1}, 0).sample(std::vector<float>{1.5f, 2.0f}).token, 0);
  // Negative logits are multiplied: −1 × 2 = −2 < −1.5.
  EXPECT_EQ(Sampler(params, std::vector<int32_t>{0}, 0).sample(std::vector<float>{-1.0f, -1.5f}).token, 1);

  params = {};
  params.frequency_penalty = 0.15f;  // per occurrence in the generated tokens
  Sampler frequency(params, {}, 0);
  const std::vector<float> logits{1.0f, 1.2f};
  EXPECT_EQ(frequency.sample(logits).token, 1);  // 1.2
  EXPECT_EQ(frequency.sample(logits).token, 1);  // 1.05
  EXPECT_EQ(frequency.sample(logits).token, 0);  // 0.9 < 1.0

  params = {};
  params.presence_penalty = 0.3f;  // once per generated token
  Sampler presence(params, {}, 0);
  EXPECT_EQ(presence.sample(logits).token, 1);
  EXPECT_EQ(presence.sample(logits).token, 0);  // 0.9 < 1.0
  EXPECT_EQ(presence.sample(logits).token, 1);  // both seen: 0.7 vs 0.9
}

TEST(Sampler, LogprobsAreThoseOfTheModel) {
  SamplingParams params;
  params.logprobs = 2;
  params.repetition_penalty = 5.0f;  // changes the choice, not the reported distribution
  Sampler sampler(params, std::vector<int32_t>{2}, 0);
  const std::vector<float> logits{0.0f, 1.0f, 3.0f, 2.0f};
  const SampledToken t = sampler.sample(logits);
  const double log_z = std::log(std::exp(0.0) + std::exp(1.0) + std::exp(3.0) + std::exp(2.0));
  EXPECT_EQ(t.token, 3);
  EXPECT_NEAR(t.logprob, 2.0 - log_z, 1e-6);
  ASSERT_EQ(t.top.size(), 2u);
  EXPECT_EQ(t.top[0].token, 2);
  EXPECT_NEAR(t.top[0].logprob, 3.0 - log_z, 1e-6);
  EXPECT_EQ(t.top[1].token, 3);
}

TEST(SamplingParams, ValidationNamesTheField) {
  SamplingParams p;
  EXPECT_TRUE(validate_sampling(p).ok());
  p.temperature = -1.0f;
  EXPECT_NE(validate_sampling(p).message().find("temperature must be"), std::string::npos);
  p = {};
  p.min_p = 1.5f;
  EXPECT_NE(validate_sampling(p).message().find("min_p must be in [0, 1], found 1.5"), std::string::npos);
  p = {};
  p.logprobs = 21;
  EXPECT_NE(validate_sampling(p).message().find("logprobs must be in [0, 20]"), std::string::npos);
  p = {};
  p.presence_penalty = 3.0f;
  EXPECT_NE(validate_sampling(p).message().find("presence_penalty"), std::string::npos);
  p = {};
  p.max_tokens = 0;
  EXPECT_NE(validate_sampling(p).message().find("max_tokens must be at least 1"), std::string::npos);
}

}  // namespace
}  // namespace ds
