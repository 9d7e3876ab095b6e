// A weight of chosen rows of another, in its format: the MTP head over a token map's rows of lm_head
// (docs/mtp.md "Draft vocabulary"), its logit i the row rows[i] of the whole head. The rows are
// copied value for value, so the gathered weight's outputs are the source's at those rows: bf16 rows
// go through their fp32 values and are packed again (exact: a bf16 value survives fp32), int8 rows
// copy their quantised bytes (re-quantising is not exact for a group whose largest |q| is under 127
// or whose scale underflowed to 0). A list of rows not a multiple of the panel rows needs no padding
// rows: the format pads the last panel as it pads any weight's, and its kernels write only n outputs.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "io/tensor_view.h"
#include "model/weight_arena.h"
#include "util/status.h"

namespace ds {

struct GatheredWeight {
  std::unique_ptr<WeightArena> memory;  // owns view's bytes
  TensorView view;                      // [rows.size(), k] in the source's format
};

// Rows `rows` of the 2-D weight `w`, in that order. Formats: row-major (stored), bf16 panels and int8
// panels; others are an error naming the format. Rows must lie in [0, n). Every gathered row's values
// are checked equal to its source row's, bit for bit (an internal error if not).
Result<GatheredWeight> gather_rows(const TensorView& w, std::span<const int32_t> rows);

}  // namespace ds
