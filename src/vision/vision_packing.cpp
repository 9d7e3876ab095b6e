#include "vision/vision_packing.h"

#include "model/weight_packing.h"

namespace ds {

std::vector<TensorView*> vision_matmul_weights(VisionWeights& weights) {
  std::vector<TensorView*> views{&weights.patch_embed};
  for (VisionBlockWeights& b : weights.blocks)
    for (TensorView* w : {&b.qkv_weight, &b.proj_weight, &b.fc1_weight, &b.fc2_weight}) views.push_back(w);
  views.push_back(&weights.merger_fc1_weight);
  views.push_back(&weights.merger_fc2_weight);
  return views;
}

std::unique_ptr<WeightArena> pack_vision_weights(VisionWeights& weights, const Backend& backend, bool round_input_bf16,
                                                 int threads, SourceRelease& release) {
  std::vector<PackedWeight> plan;
  for (TensorView* view : vision_matmul_weights(weights)) {
    const WeightFormatId format = backend.preferred_format(*view, round_input_bf16);
    if (format != view->format) plan.push_back(PackedWeight{view, format});
  }
  if (plan.empty()) return nullptr;
  return pack_weights("packing the vision tower's weights", plan, threads, release);
}

}  // namespace ds
