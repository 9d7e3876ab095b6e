// Which weights get int8 panels and which activation width (kernels/formats/int8_panels/ quantises).
#include "model/quantize.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_set>

#include "kernels/formats/kquant/kquant_type.h"
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

std::unique_ptr<WeightArena> quantize_weights_int8(Qwen35Weights& weights, int threads, SourceRelease& release) {
  const std::unordered_set<std::string> wide = sixteen_bit_inputs(weights);
  std::vector<PackedWeight> plan;
  for (TensorView* view : packed_matmul_weights(weights)) {
    // GGUF blocks keep their quantisation (Q8_0 becomes int8 panels losslessly; 4–6-bit types their
    // own panels, whose kernels read 8-bit activations only).
    const auto kernel_format = kernel_format_of_blocks(view->format);
    if (kernel_format && view->format != WeightFormatId::q8_0) {
      plan.push_back(PackedWeight{view, *kernel_format, 1});
      continue;
    }
    plan.push_back(PackedWeight{view, kernel_format.value_or(WeightFormatId::int8_panels), wide.count(view->name) ? 2 : 1});
  }
  return pack_weights("quantising weights to int8", plan, threads, release);
}

Result<std::unique_ptr<WeightArena>> quantize_weights_q4_k(Qwen35Weights& weights, const Backend& backend,
                                                           bool round_input_bf16, int threads, SourceRelease& release) {
  std::unordered_set<std::string> as_stored;
  for (const DecoderLayerWeights& layer : weights.layers)
    if (layer.type == LayerType::linear_attention)
      for (const TensorView* w : {&layer.deltanet.in_proj_a, &layer.deltanet.in_proj_b}) as_stored.insert(w->name);
  std::vector<PackedWeight> plan;
  for (TensorView* view : packed_matmul_weights(weights)) {
    if (const auto kernel_format = kernel_format_of_blocks(view->format)) {  // GGUF blocks, losslessly
      plan.push_back(PackedWeight{view, *kernel_format, view->format == WeightFormatId::q8_0 ? int8_activation_planes(weights, *view) : 1});
      continue;
    }
    if (as_stored.count(view->name)) {
      const WeightFormatId format = backend.preferred_format(*view, round_input_bf16);
      if (format != view->format) plan.push_back(PackedWeight{view, format});
      continue;
    }
    if (view->shape[1] % kSuperblock != 0)
      return Status::errorf("--weights q4_k: ", view->name, " has rows of ", view->shape[1],
                            " values; Q4_K needs a multiple of ", kSuperblock, " (use --weights int8)");
    const bool head = view == &weights.lm_head;
    plan.push_back(PackedWeight{view, head ? WeightFormatId::q6_k_panels : WeightFormatId::q4_k_panels});
  }
  return pack_weights("quantising weights to Q4_K", plan, threads, release);
}

}  // namespace ds
