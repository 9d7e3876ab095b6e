// Sampler: candidates are the tokens within 40 nats of the best (each one left out has probability
// below 5e-18), selected, never sorted whole; the softmax and the draw run in double precision.
#include "engine/sampler.h"

#include <algorithm>
#include <cmath>

#include "kernels/portable_exp.h"

namespace ds {
namespace {

constexpr double kCandidateRange = 40.0;  // nats below the best scaled logit still considered
// A top-k up to this size is found by one pass with a bounded heap, without the candidates' array.
constexpr int64_t kHeapTopK = 256;

// Higher logit first; among equals the lower token id.
bool higher_logit(const std::pair<float, int32_t>& a, const std::pair<float, int32_t>& b) {
  return a.first != b.first ? a.first > b.first : a.second < b.second;
}
bool more_likely(const Sampler::Candidate& a, const Sampler::Candidate& b) {
  return a.scaled != b.scaled ? a.scaled > b.scaled : a.token < b.token;
}

// The largest logit (NaN never is): 16 running maxima side by side, so the compare chain
// vectorises instead of waiting on itself at every element (std::max_element: 0.28 ms over a
// 248,320-token vocabulary; this: docs/benchmarks.md).
float max_logit(std::span<const float> logits) {
  constexpr size_t kLanes = 16;
  float lane[kLanes];
  for (float& l : lane) l = -INFINITY;
  size_t i = 0;
  for (; i + kLanes <= logits.size(); i += kLanes)
    for (size_t l = 0; l < kLanes; ++l) lane[l] = logits[i + l] > lane[l] ? logits[i + l] : lane[l];
  float best = -INFINITY;
  for (; i < logits.size(); ++i) best = logits[i] > best ? logits[i] : best;
  for (float l : lane) best = l > best ? l : best;
  return best;
}

}  // namespace

int32_t argmax(std::span<const float> logits) {
  const float best = max_logit(logits);
  const auto first = std::find(logits.begin(), logits.end(), best);
  return first == logits.end() ? 0 : static_cast<int32_t>(first - logits.begin());
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

// The candidates are never sorted whole: a small top-k takes its k by a heap (top_k_candidates:
// only they become candidates), a larger one and top-p find their cut by bands of logit
// (most_likely), each kept candidate's weight is computed once (after top-k: a count needs none),
// and the draw walks the kept ones in whatever order they are — any fixed order draws from the same
// distribution. Sorting all of them (tens of thousands within 40 nats under a temperature) took
// 17–21 ms a token over a 248,320-token vocabulary (docs/benchmarks.md).
int32_t Sampler::draw(std::span<const float> logits) {
  if (params_.temperature == 0.0f) return argmax(logits);
  const double inv_t = 1.0 / params_.temperature;
  const double best = static_cast<double>(max_logit(logits)) * inv_t;
  if (!std::isfinite(best)) return argmax(logits);  // an infinite logit, or none above −∞: nothing to weigh
  // min_p keeps p ≥ min_p · p_max, i.e. scaled logits ≥ best + log(min_p).
  const double floor = params_.min_p > 0.0f ? std::max(best + std::log(double(params_.min_p)), best - kCandidateRange)
                                            : best - kCandidateRange;
  // With min_p the floor leaves few candidates: the array is cheaper than weighing every token.
  if (params_.top_k <= 0 && params_.top_p >= 1.0f && params_.min_p <= 0.0f) return draw_by_weight(logits, inv_t, best, floor);
  candidates_.clear();
  if (params_.top_k > 0 && params_.top_k <= kHeapTopK) {
    top_k_candidates(logits, static_cast<size_t>(params_.top_k), inv_t, floor);
  } else {
    for (size_t i = 0; i < logits.size(); ++i) {
      const double scaled = logits[i] * inv_t;
      if (scaled >= floor) candidates_.push_back({scaled, 0.0, static_cast<int32_t>(i), 0});
    }
  }
  // Bands across [floor, best]; min_p = 1 leaves no width (every candidate equals the best).
  const Bands bands{best, best > floor ? (best - floor) / kBands : 1.0};
  size_t keep = candidates_.size();
  if (params_.top_k > 0 && static_cast<size_t>(params_.top_k) < keep) {
    const auto k = static_cast<size_t>(params_.top_k);  // top-p then works on the renormalised top-k distribution
    double unweighed = 0.0;
    keep = most_likely(keep, bands, [k](size_t count, double) { return count >= k; }, unweighed);
  }
  // Weighed only once kept: a top-k cut needs none.
  double kept = 0.0;  // the softmax denominator of the kept tokens
  for (size_t i = 0; i < keep; ++i) {
    candidates_[i].weight = std::exp(candidates_[i].scaled - best);
    kept += candidates_[i].weight;
  }
  if (params_.top_p < 1.0f) {
    const double target = params_.top_p * kept;
    keep = most_likely(keep, bands, [target](size_t, double mass) { return mass >= target; }, kept);
  }
  const double target = static_cast<double>(rng_.next() >> 11) * (1.0 / 9007199254740992.0) * kept;
  double cumulative = 0.0;
  for (size_t i = 0; i < keep; ++i) {
    cumulative += candidates_[i].weight;
    if (target < cumulative) return candidates_[i].token;
  }
  return candidates_[keep - 1].token;  // rounding left the target at the very end
}

// Temperature alone: every token within 40 nats of the best weighs e^(scaled − best), and the draw
// walks them in id order — no candidates' array (32 bytes a token, written and read). The weights
// in fp32 by portable_exp (std::exp in double per candidate was a third of the draw), summed by blocks
// in double, so the walk skips whole blocks. (The loop stays scalar: -ftrapping-math keeps GCC from
// vectorising portable_exp's selects outside the kernels' ISA builds.)
int32_t Sampler::draw_by_weight(std::span<const float> logits, double inv_t, double best, double floor) {
  constexpr size_t kBlock = 1024, kLanes = 8;
  const size_t n = logits.size(), blocks = (n + kBlock - 1) / kBlock;
  weights_.resize(n);
  block_sums_.assign(blocks, 0.0);
  const auto inv = static_cast<float>(inv_t), top = static_cast<float>(best), cut = static_cast<float>(floor - best);
  for (size_t b = 0; b < blocks; ++b) {
    const size_t first = b * kBlock, last = std::min(n, first + kBlock);
    for (size_t i = first; i < last; ++i) {
      const float d = logits[i] * inv - top;
      weights_[i] = d >= cut ? portable_exp(d) : 0.0f;  // NaN: 0
    }
    double lane[kLanes] = {};  // side by side, so the additions need not wait on each other
    size_t i = first;
    for (; i + kLanes <= last; i += kLanes)
      for (size_t l = 0; l < kLanes; ++l) lane[l] += weights_[i + l];
    for (; i < last; ++i) lane[0] += weights_[i];
    for (double l : lane) block_sums_[b] += l;
  }
  double total = 0.0;
  for (double s : block_sums_) total += s;
  const double target = static_cast<double>(rng_.next() >> 11) * (1.0 / 9007199254740992.0) * total;
  double cumulative = 0.0;
  size_t b = 0;
  while (b + 1 < blocks && target >= cumulative + block_sums_[b]) cumulative += block_sums_[b++];
  int32_t drawn = -1;
  for (size_t i = b * kBlock; i < std::min(n, (b + 1) * kBlock); ++i) {
    if (weights_[i] == 0.0f) continue;
    drawn = static_cast<int32_t>(i);
    cumulative += weights_[i];
    if (target < cumulative) return drawn;
  }
  return drawn >= 0 ? drawn : argmax(logits);  // rounding left the target at the block's very end
}

// The k most likely tokens at or above `floor` (more_likely's order: among equal logits the lower
// ids), most likely first: a heap of the k best seen, its top the worst of them, which a token
// replaces only when it beats it — in one pass over the logits, ids rising, so an equal logit (a
// higher id) never does. Once the heap is full one compare (with its worst, ≥ floor) turns almost
// every token away, a branch the CPU predicts.
void Sampler::top_k_candidates(std::span<const float> logits, size_t k, double inv_t, double floor) {
  auto least_likely_on_top = [](const Candidate& a, const Candidate& b) { return more_likely(a, b); };
  size_t i = 0;
  for (; i < logits.size() && candidates_.size() < k; ++i) {
    const double scaled = logits[i] * inv_t;
    if (!(scaled >= floor)) continue;  // NaN too
    candidates_.push_back({scaled, 0.0, static_cast<int32_t>(i), 0});
    std::push_heap(candidates_.begin(), candidates_.end(), least_likely_on_top);
  }
  double worst = candidates_.empty() ? floor : candidates_.front().scaled;
  for (; i < logits.size(); ++i) {
    const double scaled = logits[i] * inv_t;
    if (!(scaled > worst)) continue;  // NaN too
    std::pop_heap(candidates_.begin(), candidates_.end(), least_likely_on_top);
    candidates_.back() = {scaled, 0.0, static_cast<int32_t>(i), 0};
    std::push_heap(candidates_.begin(), candidates_.end(), least_likely_on_top);
    worst = candidates_.front().scaled;
  }
  std::sort(candidates_.begin(), candidates_.end(), more_likely);
}

// One pass counts and weighs the candidates by band (band 0 holds the best); the bands before the
// one where `done` first holds are kept whole, and only that band is sorted and walked. Two more
// passes partition them; no sort of more than one band (all of them only when every candidate
// falls in one band, as with equal logits).
size_t Sampler::most_likely(size_t keep, const Bands& bands, FunctionRef<bool(size_t, double)> done, double& mass) {
  band_counts_.assign(kBands, 0);
  band_weights_.assign(kBands, 0.0);
  const double per_band = 1.0 / bands.width;
  const auto first = candidates_.begin(), last = first + static_cast<std::ptrdiff_t>(keep);
  for (auto it = first; it != last; ++it) {
    it->band = static_cast<int32_t>(std::min<double>(kBands - 1, (bands.best - it->scaled) * per_band));
    ++band_counts_[static_cast<size_t>(it->band)];
    band_weights_[static_cast<size_t>(it->band)] += it->weight;
  }
  size_t count = 0, cut = kBands - 1;
  mass = 0.0;
  for (size_t band = 0; band < kBands; ++band) {
    if (done(count + band_counts_[band], mass + band_weights_[band])) {
      cut = band;
      break;
    }
    count += band_counts_[band];
    mass += band_weights_[band];
  }
  const auto band = static_cast<int32_t>(cut);
  const auto cut_begin = std::partition(first, last, [band](const Candidate& c) { return c.band < band; });
  const auto cut_end = std::partition(cut_begin, last, [band](const Candidate& c) { return c.band == band; });
  std::sort(cut_begin, cut_end, more_likely);
  for (auto it = cut_begin; it != cut_end; ++it) {
    ++count;
    mass += it->weight;
    if (done(count, mass)) return static_cast<size_t>(it - first) + 1;
  }
  return static_cast<size_t>(cut_end - first);  // rounding: reached only with the whole band
}

void Sampler::fill_logprobs(std::span<const float> logits, SampledToken& out) const {
  const float best = max_logit(logits);
  // Tokens more than kCandidateRange below the best are left out of the sum: under e^-40 each,
  // under 1e-12 of it over the whole vocabulary.
  const double floor = static_cast<double>(best) - kCandidateRange;
  double sum = 0.0;
  for (float l : logits)
    if (l >= floor) sum += std::exp(double(l) - best);
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
      std::push_heap(heap.begin(), heap.end(), higher_logit);
    } else if (higher_logit(entry, heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), higher_logit);
      heap.back() = entry;
      std::push_heap(heap.begin(), heap.end(), higher_logit);
    }
  }
  std::sort(heap.begin(), heap.end(), higher_logit);
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
