#include "model/bf16_repack.h"

#include "kernels/bf16_panels.h"
#include "util/parallel_for.h"

namespace ds {

std::unique_ptr<WeightArena> repack_weights_bf16(Qwen35Weights& weights, int threads, uint64_t* released) {
  std::vector<TensorView*> views;
  for (TensorView* view : matmul_weights(weights))
    if (view->dtype == DType::BF16 && view->layout == WeightLayout::row_major && view->shape.size() == 2)
      views.push_back(view);
  *released = 0;
  if (views.empty()) return nullptr;
  uint64_t total = 0;  // packed sizes are multiples of 128 bytes: every weight starts 128-byte aligned
  for (const TensorView* view : views) total += static_cast<uint64_t>(bf16_packed_bytes(view->shape[0], view->shape[1]));
  auto arena = std::make_unique<WeightArena>(total);
  uint64_t offset = 0;
  for (TensorView* view : views) {
    const TensorView source = *view;
    const int64_t n = source.shape[0], k = source.shape[1];
    std::byte* packed = arena->data() + offset;
    parallel_for(static_cast<size_t>(bf16_panels(n)), threads, [&](size_t begin, size_t end) {
      bf16_pack_panels(source.data, n, k, static_cast<int64_t>(begin) * kBf16PanelRows,
                       std::min(n, static_cast<int64_t>(end) * kBf16PanelRows), packed);
    });
    view->name = source.name + " (bf16 panels)";
    view->data = packed;
    view->nbytes = static_cast<uint64_t>(bf16_packed_bytes(n, k));
    view->layout = WeightLayout::bf16_panels;
    offset += view->nbytes;
    *released += release_source_pages(source);
  }
  return arena;
}

}  // namespace ds
