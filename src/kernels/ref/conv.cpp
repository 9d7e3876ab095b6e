// Reference causal conv1d + SiLU: the shared loops of conv.inc over all channels at once.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/ref/ref_backend.h"
#include "kernels/portable_exp.h"

namespace ds {
namespace {
#include "kernels/conv.inc"
}  // namespace

void RefBackend::causal_conv1d_silu(const float* x, int64_t n, int64_t channels, const float* taps, int64_t kernel,
                                    const float* state_in, float* state_out, float* out) {
  std::vector<float> history(static_cast<size_t>((kernel - 1) * channels));  // [K-1, channels]
  conv_channels(x, n, channels, taps, kernel, state_in, state_out, out, 0, channels, history.data());
}

}  // namespace ds
