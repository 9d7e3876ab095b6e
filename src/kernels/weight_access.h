// Scalar access to the elements of a tensor as stored (bf16 / f16 / f32, row-major), for reference
// kernels: norms, conv taps, gates, embeddings. Packed matmul weights are read through their format
// (kernels/formats/weight_format.h: dequantize_row).
#pragma once

#include <cstring>

#include "io/tensor_view.h"
#include "util/check.h"
#include "util/float16.h"

namespace ds {

// Calls loop(read), read(element_index) → fp32 in w's dtype: the dtype is decided once for a whole
// loop. (The conv taps' gather, 24K elements a layer, deciding it per element: 0.33 ms of a 2B int8
// decode step; once per loop: 0.27–0.29 ms.)
template <typename Loop>
void with_weight_reader(const TensorView& w, Loop&& loop) {
  DS_CHECK(w.format == WeightFormatId::stored, "element access to packed weight ", w.name);
  const std::byte* data = w.data;
  switch (w.dtype) {
    case DType::F32:
      return loop([data](int64_t i) {
        float value;
        std::memcpy(&value, data + 4 * i, 4);
        return value;
      });
    case DType::BF16:
      return loop([data](int64_t i) {
        uint16_t bits;
        std::memcpy(&bits, data + 2 * i, 2);
        return bf16_to_float(bits);
      });
    case DType::F16:
      return loop([data](int64_t i) {
        uint16_t bits;
        std::memcpy(&bits, data + 2 * i, 2);
        return fp16_to_float(bits);
      });
    default: DS_CHECK(false, "weight ", w.name, " has unsupported dtype ", dtype_name(w.dtype));
  }
}

inline float weight_at(const TensorView& w, int64_t index) {
  float value = 0.0f;
  with_weight_reader(w, [&](auto read) { value = read(index); });
  return value;
}

// out[0 .. count) = w[first .. first + count) as fp32.
inline void weight_span(const TensorView& w, int64_t first, int64_t count, float* out) {
  with_weight_reader(w, [&](auto read) {
    for (int64_t i = 0; i < count; ++i) out[i] = read(first + i);
  });
}

// Rows [first_row, first_row + rows) of w viewed as [*, cols], transposed: out[j · rows + r] =
// w[(first_row + r) · cols + j] as fp32. Column by column, so the writes are one run each and the
// loop vectorises (row by row it did not: a 6,144-channel conv call for one token took 13.9 µs, 10.7 now).
inline void weight_columns(const TensorView& w, int64_t first_row, int64_t rows, int64_t cols, float* out) {
  with_weight_reader(w, [&](auto read) {
    for (int64_t j = 0; j < cols; ++j)
      for (int64_t r = 0; r < rows; ++r) out[j * rows + r] = read((first_row + r) * cols + j);
  });
}

}  // namespace ds
