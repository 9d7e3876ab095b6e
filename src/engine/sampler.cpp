// Sampler: candidates are the tokens within 40 nats of the best (each one left out has probability
// below 5e-18), sorted once; the softmax and the draw run in double precision.
#include "engine/sampler.h"

#include <algorithm>
#include <cmath>

namespace ds {
namespace {

constexpr double kCandidateRange = 40.0;  // nats below the best scaled logit still considered

bool more_likely(const std::pair<float, int32_t>& a, const std::pair<float, int32_t>& b) {
  return a.first != b.first ? a.first > b.first : a.second < b.second;
}

}  // namespace

int32_t argmax(std::span<const float> logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

Sampler::Sampler(const SamplingParams& params, std::span<const int32_t> prompt, uint64_t seed)
    : params_(params), rng_(params.seed.value_or(seed)) {
  if (params_.repetition_penalty != 1.0f) {
    prompt_tokens_.assign(prompt.begin(), prompt.end());
    std::sort(prompt_tokens_.begin(), prompt_tokens_.end());
    prompt_tokens_.erase(std::unique(prompt_tokens_.begin(), prompt_tokens_.end()), prompt_tokens_.end());
  }
}

std::span<const float> Sampler::penalised(std::span<const float> logits) {
  const bool repetition = params_.repetition_penalty != 1.0f;
  if (!repetition && params_.presence_penalty == 0.0f && params_.frequency_penalty == 0.0f) return logits;
  work_.assign(logits.begin(), logits.end());
  const auto vocab = static_cast<int32_t>(work_.size());
  auto repeat = [&](int32_t token) {
    float& l = work_[token];
    l = l > 0.0f ? l / params_.repetition_penalty : l * params_.repetition_penalty;
  };
  if (repetition)
    for (int32_t token : prompt_tokens_)
      if (token < vocab) repeat(token);
  for (const auto& [token, count] : output_counts_) {
    if (token >= vocab) continue;
    if (repetition && !std::binary_search(prompt_tokens_.begin(), prompt_tokens_.end(), token)) repeat(token);
    work_[token] -= params_.frequency_penalty * static_cast<float>(count) + params_.presence_penalty;
  }
  return work_;
}

int32_t Sampler::draw(std::span<const float> logits) {
  if (params_.temperature == 0.0f) return argmax(logits);
  const double inv_t = 1.0 / params_.temperature;
  const double best = *std::max_element(logits.begin(), logits.end()) * inv_t;
  // min_p keeps p ≥ min_p · p_max, i.e. scaled logits ≥ best + log(min_p).
  const double floor = params_.min_p > 0.0f ? std::max(best + std::log(double(params_.min_p)), best - kCandidateRange)
                                            : best - kCandidateRange;
  candidates_.clear();
  double total = 0.0;  // softmax denominator over every token min_p keeps
  const double min_p_floor = params_.min_p > 0.0f ? best + std::log(double(params_.min_p)) : -INFINITY;
  for (size_t i = 0; i < logits.size(); ++i) {
    const double scaled = logits[i] * inv_t;
    if (scaled >= min_p_floor) total += std::exp(scaled - best);
    if (scaled >= floor) candidates_.emplace_back(static_cast<float>(scaled), static_cast<int32_t>(i));
  }
  std::sort(candidates_.begin(), candidates_.end(), more_likely);
  weights_.resize(candidates_.size());
  for (size_t i = 0; i < candidates_.size(); ++i) weights_[i] = std::exp(double(candidates_[i].first) - best);
  size_t keep = candidates_.size();
  if (params_.top_k > 0 && static_cast<size_t>(params_.top_k) < keep) {
    keep = static_cast<size_t>(params_.top_k);
    total = 0.0;  // top-p then works on the renormalised top-k distribution
    for (size_t i = 0; i < keep; ++i) total += weights_[i];
  }
  if (params_.top_p < 1.0f) {  // the smallest prefix whose probability reaches top_p (at least one token)
    double mass = 0.0;
    for (size_t i = 0; i < keep; ++i) {
      mass += weights_[i];
      if (mass >= params_.top_p * total) {
        keep = i + 1;
        break;
      }
    }
  }
  double kept = 0.0;
  for (size_t i = 0; i < keep; ++i) kept += weights_[i];
  const double target = static_cast<double>(rng_.next() >> 11) * (1.0 / 9007199254740992.0) * kept;
  double cumulative = 0.0;
  for (size_t i = 0; i < keep; ++i) {
    cumulative += weights_[i];
    if (target < cumulative) return candidates_[i].second;
  }
  return candidates_[keep - 1].second;
}

void Sampler::fill_logprobs(std::span<const float> logits, SampledToken& out) const {
  const float best = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (float l : logits) sum += std::exp(double(l) - best);
  const double log_z = best + std::log(sum);
  out.logprob = static_cast<float>(logits[out.token] - log_z);
  out.top.clear();
  if (params_.logprobs <= 0) return;
  // The k most likely tokens: a bounded min-heap over one pass (k ≤ 20).
  const auto k = static_cast<size_t>(params_.logprobs);
  std::vector<std::pair<float, int32_t>> heap;
  heap.reserve(k + 1);
  for (size_t i = 0; i < logits.size(); ++i) {
    const std::pair<float, int32_t> entry{logits[i], static_cast<int32_t>(i)};
    if (heap.size() < k) {
      heap.push_back(entry);
      std::push_heap(heap.begin(), heap.end(), more_likely);
    } else if (more_likely(entry, heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), more_likely);
      heap.back() = entry;
      std::push_heap(heap.begin(), heap.end(), more_likely);
    }
  }
  std::sort(heap.begin(), heap.end(), more_likely);
  for (const auto& [logit, token] : heap) out.top.push_back({token, static_cast<float>(logit - log_z)});
}

SampledToken Sampler::sample(std::span<const float> logits) {
  SampledToken out;
  out.token = draw(penalised(logits));
  if (params_.logprobs >= 0) fill_logprobs(logits, out);
  ++output_counts_[out.token];
  return out;
}

}  // namespace ds
