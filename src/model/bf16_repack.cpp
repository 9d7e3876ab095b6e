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
  return repack_into_arena(
      "repacking bf16 weights into panels", views, [](const TensorView& w) { return static_cast<uint64_t>(bf16_packed_bytes(w.shape[0], w.shape[1])); },
      [&](const TensorView& source, std::byte* packed) {
        const int64_t n = source.shape[0], k = source.shape[1];
        parallel_for(static_cast<size_t>(bf16_panels(n)), threads, [&](size_t begin, size_t end) {
          bf16_pack_panels(source.data, n, k, static_cast<int64_t>(begin) * kBf16PanelRows,
                           std::min(n, static_cast<int64_t>(end) * kBf16PanelRows), packed);
        });
        TensorView view = source;
        view.name = source.name + " (bf16 panels)";
        view.data = packed;
        view.nbytes = static_cast<uint64_t>(bf16_packed_bytes(n, k));
        view.layout = WeightLayout::bf16_panels;
        return view;
      },
      released);
}

}  // namespace ds
