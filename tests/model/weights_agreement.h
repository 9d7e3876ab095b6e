// Teacher-forced agreement of a model's logits with a reference's (the quantised weights' accuracy
// tests): mean KL(reference ‖ candidate), top-1, and top-1 where the reference's top-2 margin is
// decisive: > 3e-2 · (top logit − median logit). That is the bf16 tests' rule (3e-2 · max |logit|)
// with a yardstick the random checkpoints' unproducible ids cannot set: they score ~100 nats below
// the rest (model/visible_text.h), so max |logit| would be theirs and no position decisive, while
// the median is a producible id's; for logits centred on zero both yardsticks are about equal.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "model/qwen35_model.h"
#include "model_logits.h"

namespace ds::test {

inline double kl_divergence(std::span<const float> p_logits, std::span<const float> q_logits) {
  auto log_softmax = [](std::span<const float> x) {
    const double max = *std::max_element(x.begin(), x.end());
    double total = 0;
    for (float v : x) total += std::exp(v - max);
    std::vector<double> out(x.size());
    for (size_t i = 0; i < x.size(); ++i) out[i] = x[i] - max - std::log(total);
    return out;
  };
  const auto lp = log_softmax(p_logits), lq = log_softmax(q_logits);
  double kl = 0;
  for (size_t i = 0; i < lp.size(); ++i) kl += std::exp(lp[i]) * (lp[i] - lq[i]);
  return kl;
}

inline int32_t argmax(std::span<const float> x) {
  return static_cast<int32_t>(std::max_element(x.begin(), x.end()) - x.begin());
}

// Teacher-forced agreement of two models' logits over positions: top-1, top-1 where the native
// top-2 margin is decisive (above), and mean KL(native ‖ candidate).
struct Agreement {
  int64_t positions = 0, agree = 0, decisive = 0, decisive_agree = 0;
  double kl_total = 0;
  void add(std::span<const float> native, std::span<const float> candidate, int64_t vocab) {
    for (size_t r = 0; r < native.size() / vocab; ++r) {
      const auto ra = native.subspan(r * vocab, vocab), rb = candidate.subspan(r * vocab, vocab);
      const int32_t best = argmax(ra);
      float second = -INFINITY;
      for (int64_t i = 0; i < vocab; ++i)
        if (i != best) second = std::max(second, ra[i]);
      std::vector<float> sorted(ra.begin(), ra.end());
      std::nth_element(sorted.begin(), sorted.begin() + vocab / 2, sorted.end());
      const float spread = ra[best] - sorted[vocab / 2];
      const bool same = argmax(rb) == best;
      agree += same;
      if (ra[best] - second > 3e-2f * spread) {
        ++decisive;
        decisive_agree += same;
      }
      kl_total += kl_divergence(ra, rb);
      ++positions;
    }
  }
  double top1() const { return double(agree) / positions; }
  double mean_kl() const { return kl_total / positions; }
  std::string summary() const {
    return "top-1 agreement " + std::to_string(top1()) + " (decisive " + std::to_string(decisive_agree) + "/" +
           std::to_string(decisive) + "), mean KL " + std::to_string(mean_kl()) + " over " + std::to_string(positions) +
           " positions";
  }
};

}  // namespace ds::test
