#include "model/bf16_repack.h"

#include <vector>

#include "model/quantize.h"
#include "model/weight_packing.h"

namespace ds {

std::unique_ptr<WeightArena> repack_weights_bf16(Qwen35Weights& weights, const Backend& backend, bool round_input_bf16,
                                                 int threads, SourceRelease& release) {
  std::vector<PackedWeight> plan;
  for (TensorView* view : packed_matmul_weights(weights)) {
    if (const auto kernel_format = kernel_format_of_blocks(view->format)) {  // GGUF blocks, losslessly
      const int64_t planes = view->format == WeightFormatId::q8_0 ? int8_activation_planes(weights, *view) : 1;
      plan.push_back(PackedWeight{view, *kernel_format, planes});
      continue;
    }
    const WeightFormatId format = backend.preferred_format(*view, round_input_bf16);
    if (format != view->format) plan.push_back(PackedWeight{view, format});
  }
  if (plan.empty()) return nullptr;
  return pack_weights("repacking weights into panels", plan, threads, release);
}

}  // namespace ds
