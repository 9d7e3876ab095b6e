// Scalar access to the elements of a tensor as stored (bf16 / f16 / f32, row-major), for reference
// kernels: norms, conv taps, gates, embeddings. Packed matmul weights are read through their format
// (kernels/formats/weight_format.h: dequantize_row).
#pragma once

#include <cstring>

#include "io/tensor_view.h"
#include "util/check.h"
#include "util/float16.h"

namespace ds {

inline float weight_at(const TensorView& w, int64_t index) {
  DS_CHECK(w.format == WeightFormatId::stored, "element access to packed weight ", w.name);
  switch (w.dtype) {
    case DType::F32: {
      float value;
      std::memcpy(&value, w.data + 4 * index, 4);  // tensor data may be unaligned
      return value;
    }
    case DType::BF16: {
      uint16_t bits;
      std::memcpy(&bits, w.data + 2 * index, 2);
      return bf16_to_float(bits);
    }
    case DType::F16: {
      uint16_t bits;
      std::memcpy(&bits, w.data + 2 * index, 2);
      return fp16_to_float(bits);
    }
    default: DS_CHECK(false, "weight ", w.name, " has unsupported dtype ", dtype_name(w.dtype));
  }
  return 0.0f;
}

// out[0 .. count) = w[first .. first + count) as fp32.
inline void weight_span(const TensorView& w, int64_t first, int64_t count, float* out) {
  DS_CHECK(w.format == WeightFormatId::stored, "element access to packed weight ", w.name);
  if (w.dtype == DType::F32) {
    std::memcpy(out, w.data + 4 * first, 4 * count);
    return;
  }
  for (int64_t i = 0; i < count; ++i) out[i] = weight_at(w, first + i);
}

}  // namespace ds
