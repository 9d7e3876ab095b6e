#include "model/bf16_repack.h"

#include <vector>

#include "model/quantize.h"
#include "model/weight_packing.h"

namespace ds {

std::unique_ptr<WeightArena> repack_weights_bf16(Qwen35Weights& weights, const Backend& backend, bool round_input_bf16,
                                                 int threads, uint64_t* released) {
  std::vector<PackedWeight> plan;
  for (TensorView* view : matmul_weights(weights)) {
    if (view->format == WeightFormatId::q8_0) {  // GGUF Q8_0: int8 panels, losslessly (kernels/formats/q8_0/)
      plan.push_back(PackedWeight{view, WeightFormatId::q8_0_int8_panels, int8_activation_planes(weights, *view)});
      continue;
    }
    const WeightFormatId format = backend.preferred_format(*view, round_input_bf16);
    if (format != view->format) plan.push_back(PackedWeight{view, format});
  }
  *released = 0;
  if (plan.empty()) return nullptr;
  return pack_weights("repacking weights into panels", plan, threads, released);
}

}  // namespace ds
