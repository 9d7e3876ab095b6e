// gather_rows: per format, the cheapest exact copy of a row, then a check of every row's values.
#include "model/gathered_rows.h"

#include <cstring>
#include <vector>

#include "kernels/formats/int8_panels/int8_panels.h"
#include "kernels/formats/weight_format.h"
#include "util/float16.h"

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
  if (w.format != WeightFormatId::stored && w.format != WeightFormatId::bf16_panels && w.format != WeightFormatId::int8_panels)
    return Status::errorf("gathering rows of ", w.name, ": expected a row-major, bf16 panels or int8 panels weight, found ",
                          format.name());
  GatheredWeight out;
  out.memory = std::make_unique<WeightArena>(format.bytes(n, k));
  std::byte* packed = out.memory->data();
  TensorView gathered = w;  // [n, k]
  gathered.shape = {n, k};
  gathered.name = w.name + " (gathered rows)";
  gathered.nbytes = format.bytes(n, k);
  gathered.data = packed;
  gathered.owned = true;  // not a file's pages: nothing may release them (weight_arena.h)
  std::vector<float> values(static_cast<size_t>(k));  // [k] one source row
  if (w.format == WeightFormatId::stored) {
    const uint64_t row_bytes = format.bytes(1, k);
    for (int64_t r = 0; r < n; ++r)
      std::memcpy(packed + r * row_bytes, w.data + static_cast<uint64_t>(rows[static_cast<size_t>(r)]) * row_bytes, row_bytes);
  } else if (w.format == WeightFormatId::bf16_panels) {
    // The rows as a stored BF16 [n, k] weight, then packed like the checkpoint's own.
    std::vector<uint16_t> staged(static_cast<size_t>(n * k));  // [n, k] bf16
    for (int64_t r = 0; r < n; ++r) {
      format.dequantize_row(w, rows[static_cast<size_t>(r)], values.data());
      for (int64_t c = 0; c < k; ++c) staged[static_cast<size_t>(r * k + c)] = float_to_bf16(values[static_cast<size_t>(c)]);
    }
    TensorView source;
    source.name = gathered.name;
    source.dtype = DType::BF16;
    source.shape = {n, k};
    source.data = reinterpret_cast<const std::byte*>(staged.data());
    source.nbytes = static_cast<uint64_t>(n * k * 2);
    format.pack(source, 0, format.panels(n), packed);
  } else {  // int8 panels: each row's q and fp16 scale bits as they are
    const int64_t groups = int8_groups(k);
    std::vector<int8_t> q(static_cast<size_t>(groups * kInt8ScaleGroup), 0);  // [groups · 32]
    std::vector<uint16_t> scales(static_cast<size_t>(groups));                  // [groups] fp16 bits
    int8_clear_packed(packed, n, k);
    for (int64_t r = 0; r < n; ++r) {
      const int64_t from = rows[static_cast<size_t>(r)];
      for (int64_t c = 0; c < k; ++c) q[static_cast<size_t>(c)] = static_cast<int8_t>(int8_weight_q(w, from, c));
      for (int64_t g = 0; g < groups; ++g) std::memcpy(&scales[static_cast<size_t>(g)], w.data + int8_scale_offset(k, from, g), 2);
      int8_pack_row(packed, k, r, q.data(), scales.data());
    }
  }
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
