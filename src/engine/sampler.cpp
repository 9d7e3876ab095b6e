// Sampler: softmax over the kept candidates in double precision for a stable draw.
#include "engine/sampler.h"

#include <algorithm>
#include <cmath>

namespace ds {

Status validate_sampling(const SamplingParams& p) {
  if (!(p.temperature >= 0.0f) || !std::isfinite(p.temperature))
    return Status::errorf("temperature must be a finite number >= 0, found ", p.temperature);
  if (p.top_k < 0) return Status::errorf("top_k must be >= 0 (0 = off), found ", p.top_k);
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f)) return Status::errorf("top_p must be in (0, 1], found ", p.top_p);
  return {};
}

int32_t argmax(std::span<const float> logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

int32_t Sampler::sample(std::span<const float> logits) {
  if (params_.temperature == 0.0f) return argmax(logits);
  candidates_.clear();
  for (size_t i = 0; i < logits.size(); ++i) candidates_.emplace_back(logits[i] / params_.temperature, static_cast<int32_t>(i));
  std::sort(candidates_.begin(), candidates_.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  if (params_.top_k > 0 && static_cast<size_t>(params_.top_k) < candidates_.size()) candidates_.resize(params_.top_k);
  std::vector<double> probs(candidates_.size());
  double total = 0.0;
  for (size_t i = 0; i < candidates_.size(); ++i) total += probs[i] = std::exp(double(candidates_[i].first) - candidates_[0].first);
  // top-p: the smallest prefix whose probability reaches top_p (always at least one token).
  size_t keep = candidates_.size();
  if (params_.top_p < 1.0f) {
    double mass = 0.0;
    for (size_t i = 0; i < candidates_.size(); ++i) {
      mass += probs[i] / total;
      if (mass >= params_.top_p) {
        keep = i + 1;
        break;
      }
    }
  }
  double kept_total = 0.0;
  for (size_t i = 0; i < keep; ++i) kept_total += probs[i];
  const double draw = static_cast<double>(rng_.next() >> 11) * (1.0 / 9007199254740992.0) * kept_total;
  double cumulative = 0.0;
  for (size_t i = 0; i < keep; ++i) {
    cumulative += probs[i];
    if (draw < cumulative) return candidates_[i].second;
  }
  return candidates_[keep - 1].second;
}

}  // namespace ds
