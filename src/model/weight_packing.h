// Packing matmul weights at load time into the formats model/ chose for them (kernels/formats/):
// one WeightArena for all of them, each weight's panels packed in parallel, and the mapped source
// pages released afterwards, so the resident set holds one copy.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "io/tensor_view.h"
#include "model/weight_arena.h"

namespace ds {

struct PackedWeight {
  TensorView* view;              // replaced by the packed view
  WeightFormatId format;         // a format whose pack() makes it from the view's format
  int64_t activation_planes = 1;  // TensorView::activation_planes of the result
};

// The format the kernels run a weight stored in a GGUF block type from (the same values, repacked
// at load: Q8_0 → int8 panels, Q4_K → Q4_K panels, ...), or nullopt for any other format.
std::optional<WeightFormatId> kernel_format_of_blocks(WeightFormatId format);

// Packs every weight of `plan` into one new arena (progress on stderr under `label`), giving back
// each source as `release` says once its packed copy replaced it.
std::unique_ptr<WeightArena> pack_weights(const std::string& label, std::span<const PackedWeight> plan, int threads,
                                          SourceRelease& release);

}  // namespace ds
