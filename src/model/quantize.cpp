// Int8 quantisation of the matmul weights at load time (symmetric scales per group of a row), packed
// into the kernels' panel layout.
#include "model/quantize.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_set>

#include "kernels/int8_panels.h"
#include "kernels/weight_access.h"
#include "util/check.h"
#include "util/parallel_for.h"

namespace ds {

namespace {

// Quantises w into `packed` (int8_packed_bytes of its shape, 64-byte aligned); each thread packs
// whole panels (disjoint bytes), padding included.
TensorView quantize(const TensorView& w, std::byte* packed, int threads) {
  const int64_t rows = w.shape[0], cols = w.shape[1], groups = int8_groups(cols);
  parallel_for(static_cast<size_t>(int8_panels(rows)), threads, [&](size_t begin, size_t end) {
    std::vector<float> row(static_cast<size_t>(cols));
    std::vector<int8_t> q(static_cast<size_t>(groups * kInt8Group), 0);
    std::vector<float> scales(static_cast<size_t>(groups));
    const auto panel_bytes = static_cast<size_t>(int8_panel_bytes(cols));
    int8_clear_packed(packed + begin * panel_bytes, static_cast<int64_t>(end - begin) * kInt8PanelRows, cols);
    const int64_t first = static_cast<int64_t>(begin) * kInt8PanelRows;
    const int64_t last = std::min(rows, static_cast<int64_t>(end) * kInt8PanelRows);
    for (int64_t r = first; r < last; ++r) {
      weight_span(w, r * cols, cols, row.data());
      for (int64_t g = 0; g < groups; ++g) {
        const int64_t lo = g * kInt8Group, hi = std::min(cols, lo + kInt8Group);
        float max_abs = 0.0f;
        for (int64_t c = lo; c < hi; ++c) max_abs = std::max(max_abs, std::fabs(row[c]));
        const float scale = max_abs > 0.0f ? max_abs / 127.0f : 1.0f;
        scales[g] = scale;
        // round-to-nearest-even of the clamped quotient, as std::nearbyint, by the 1.5 · 2^23 trick
        // (exact for |v| < 2^22) so that the loop vectorises: loading 2B took 10–15 s with the libm call
        constexpr float kRound = 12582912.0f;
        for (int64_t c = lo; c < hi; ++c) {
          const float v = std::clamp(row[c] / scale, -127.0f, 127.0f);
          q[c] = static_cast<int8_t>(static_cast<int32_t>((v + kRound) - kRound));
        }
      }
      int8_pack_row(packed, cols, r, q.data(), scales.data());
    }
  });
  return TensorView{w.name + " (int8)", DType::I8, w.shape, packed, static_cast<uint64_t>(int8_packed_bytes(rows, cols)),
                    kInt8Group};
}

// The names of the matmul weights that get 16-bit activations (names: the views are rewritten as
// they are packed).
std::unordered_set<std::string> sixteen_bit_inputs(const Qwen35Weights& weights) {
  std::unordered_set<std::string> names;
  for (const DecoderLayerWeights& layer : weights.layers) {
    // The DeltaNet's q / k / v, output gate z and output projection: their errors enter a recurrent
    // state that carries them over the whole sequence. On the 2B shape's 512-token run int8
    // activations there took mean KL to bf16 from 0.0075 (weight-only int8) to 0.017; int8
    // activations on every other matmul cost little (docs/numerics.md).
    if (layer.type == LayerType::linear_attention)
      for (const TensorView* w : {&layer.deltanet.in_proj_qkv, &layer.deltanet.in_proj_z, &layer.deltanet.out_proj})
        names.insert(w->name);
    // down_proj too: its input (SiLU(gate) · up) has the widest range of any matmul input, and
    // 16-bit activations there bring the 2B run's mean KL from 0.0105 to 0.0089 (≤ 0.01, the
    // target) for about 13% more prefill matmul time (measured with the others above).
    names.insert(layer.mlp.down_proj.name);
  }
  return names;
}

}  // namespace

std::unique_ptr<WeightArena> quantize_weights_int8(Qwen35Weights& weights, int threads, uint64_t* released) {
  const std::vector<TensorView*> views = matmul_weights(weights);
  const std::unordered_set<std::string> wide = sixteen_bit_inputs(weights);
  return repack_into_arena(
      "quantising weights to int8", views, [](const TensorView& w) { return static_cast<uint64_t>(int8_packed_bytes(w.shape[0], w.shape[1])); },
      [&](const TensorView& source, std::byte* packed) {
        TensorView view = quantize(source, packed, threads);
        view.activation_planes = wide.count(source.name) ? 2 : 1;
        return view;
      },
      released);
}

}  // namespace ds
