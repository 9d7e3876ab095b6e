// Which weights get int8 panels and which activation width (kernels/formats/int8_panels/ quantises).
#include "model/quantize.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_set>

#include "model/weight_packing.h"

namespace ds {

namespace {

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

int64_t int8_activation_planes(const Qwen35Weights& weights, const TensorView& w) {
  return sixteen_bit_inputs(weights).count(w.name) ? 2 : 1;
}

std::unique_ptr<WeightArena> quantize_weights_int8(Qwen35Weights& weights, int threads, uint64_t* released) {
  const std::unordered_set<std::string> wide = sixteen_bit_inputs(weights);
  std::vector<PackedWeight> plan;
  for (TensorView* view : matmul_weights(weights)) {
    const WeightFormatId route =
        view->format == WeightFormatId::q8_0 ? WeightFormatId::q8_0_int8_panels : WeightFormatId::int8_panels;
    plan.push_back(PackedWeight{view, route, wide.count(view->name) ? 2 : 1});
  }
  return pack_weights("quantising weights to int8", plan, threads, released);
}

}  // namespace ds
