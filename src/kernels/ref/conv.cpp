// Reference causal depthwise conv1d + SiLU with a rolling state of the previous K-1 inputs
// (HF Qwen3_5GatedDeltaNet conv1d / causal_conv1d_update; spec §4.1 step 3, §4.4).
#include <cmath>
#include <vector>

#include "kernels/ref/ref_backend.h"
#include "kernels/weight_access.h"

namespace ds {

void RefBackend::causal_conv1d_silu(const float* x, int64_t n, int64_t channels, const TensorView& w, float* state,
                                    float* out) {
  const int64_t kernel = w.shape[2];
  const int64_t history = kernel - 1;
  // Input at time t (t < 0 reads the state: state row history + t).
  auto input = [&](int64_t t, int64_t c) { return t < 0 ? state[(history + t) * channels + c] : x[t * channels + c]; };
  std::vector<float> taps(static_cast<size_t>(kernel));
  for (int64_t c = 0; c < channels; ++c) {
    weight_span(w, c * kernel, kernel, taps.data());
    for (int64_t t = 0; t < n; ++t) {
      float acc = 0.0f;
      for (int64_t j = 0; j < kernel; ++j) acc += taps[j] * input(t - history + j, c);  // taps[K-1] × current
      out[t * channels + c] = acc / (1.0f + std::exp(-acc));
    }
  }
  // New state: the last K-1 inputs of (old state ++ x).
  std::vector<float> next(static_cast<size_t>(history * channels));
  for (int64_t r = 0; r < history; ++r)
    for (int64_t c = 0; c < channels; ++c) next[r * channels + c] = input(n - history + r, c);
  std::copy(next.begin(), next.end(), state);
}

}  // namespace ds
