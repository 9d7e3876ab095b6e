// gather_rows: the format's own exact copy of the rows (WeightFormat::gather_rows), then a check of
// every row's values.
#include "model/gathered_rows.h"

#include <cstring>
#include <vector>

#include "kernels/formats/weight_format.h"

namespace ds {

Result<GatheredWeight> gather_rows(const TensorView& w, std::span<const int32_t> rows) {
  if (w.shape.size() != 2) return Status::errorf("gathering rows of ", w.name, ": expected a 2-D weight, found ", shape_to_string(w.shape));
  const int64_t n = static_cast<int64_t>(rows.size()), source_rows = w.shape[0], k = w.shape[1];
  if (n == 0) return Status::errorf("gathering rows of ", w.name, ": expected at least one row, found none");
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i] < 0 || rows[i] >= source_rows)
      return Status::errorf("gathering rows of ", w.name, ": row ", rows[i], " (entry ", i, ") is out of range: expected 0 .. ",
                            source_rows - 1);
  const WeightFormat& format = format_of(w);
  if (!format.gatherable())
    return Status::errorf("gathering rows of ", w.name, ": expected a weight format that can gather rows, found ",
                          format.name());
  GatheredWeight out;
  out.memory = std::make_unique<WeightArena>(format.bytes(n, k));
  TensorView gathered = w;  // [n, k]
  gathered.shape = {n, k};
  gathered.name = w.name + " (gathered rows)";
  gathered.nbytes = format.bytes(n, k);
  gathered.data = out.memory->data();
  gathered.owned = true;  // not a file's pages: nothing may release them (weight_arena.h)
  format.gather_rows(w, rows, out.memory->data());
  std::vector<float> values(static_cast<size_t>(k));  // [k] one source row
  // The point of the copy: logit i of the gathered head is logit rows[i] of the whole one.
  std::vector<float> copied(static_cast<size_t>(k));  // [k]
  for (int64_t r = 0; r < n; ++r) {
    format.dequantize_row(w, rows[static_cast<size_t>(r)], values.data());
    format.dequantize_row(gathered, r, copied.data());
    if (std::memcmp(values.data(), copied.data(), sizeof(float) * static_cast<size_t>(k)) != 0)
      return Status::internal("gathering rows of ", w.name, " (", format.name(), "): gathered row ", r, " differs from row ",
                              rows[static_cast<size_t>(r)]);
  }
  out.view = gathered;
  return out;
}

}  // namespace ds
