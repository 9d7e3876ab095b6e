#include "model/weight_packing.h"

#include <string>
#include <unordered_map>
#include <vector>

#include "kernels/formats/weight_format.h"
#include "util/check.h"
#include "util/parallel_ranges.h"

namespace ds {

std::optional<WeightFormatId> kernel_format_of_blocks(WeightFormatId format) {
  switch (format) {
    case WeightFormatId::q8_0: return WeightFormatId::q8_0_int8_panels;
    case WeightFormatId::q4_k: return WeightFormatId::q4_k_panels;
    case WeightFormatId::q5_k: return WeightFormatId::q5_k_panels;
    case WeightFormatId::q6_k: return WeightFormatId::q6_k_panels;
    case WeightFormatId::iq4_xs: return WeightFormatId::iq4_xs_panels;
    default: return std::nullopt;
  }
}

std::unique_ptr<WeightArena> pack_weights(const std::string& label, std::span<const PackedWeight> plan, int threads,
                                          SourceRelease& release) {
  std::vector<TensorView*> views;
  std::unordered_map<std::string, const PackedWeight*> by_name;  // repack_into_arena hands copies of the views
  for (const PackedWeight& weight : plan) {
    const WeightFormat& format = weight_format(weight.format, weight.view->dtype);
    DS_CHECK(format.packable() && weight.view->shape.size() == 2, "cannot pack ", weight.view->name, " into ",
             format.name());
    views.push_back(weight.view);
    by_name[weight.view->name] = &weight;
  }
  return repack_into_arena(
      label, views,
      [&](const TensorView& source) {
        const WeightFormat& format = weight_format(by_name.at(source.name)->format, source.dtype);
        return (format.bytes(source.shape[0], source.shape[1]) + 63) / 64 * 64;
      },
      [&](const TensorView& source, std::byte* packed) {
        const PackedWeight& weight = *by_name.at(source.name);
        const WeightFormat& format = weight_format(weight.format, source.dtype);
        parallel_ranges(static_cast<size_t>(format.panels(source.shape[0])), threads, [&](size_t begin, size_t end) {
          format.pack(source, static_cast<int64_t>(begin), static_cast<int64_t>(end), packed);
        });
        TensorView view = format.packed_view(source, packed);
        view.activation_planes = weight.activation_planes;
        return view;
      },
      release);
}

}  // namespace ds
