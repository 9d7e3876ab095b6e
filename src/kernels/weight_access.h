// Scalar access to weight elements of any stored dtype and layout (bf16 / f16 / f32, bf16 and int8 panels), for reference kernels.
// Fast kernels read their native dtype directly; these define what "the value of a weight" is.
#pragma once

#include <cstring>

#include "io/tensor_view.h"
#include "kernels/bf16_panels.h"
#include "kernels/int8_panels.h"
#include "util/check.h"
#include "util/float16.h"

namespace ds {

inline float weight_at(const TensorView& w, int64_t index) {
  switch (w.dtype) {
    case DType::F32: {
      float value;
      std::memcpy(&value, w.data + 4 * index, 4);  // tensor data may be unaligned
      return value;
    }
    case DType::BF16: {
      uint16_t bits;
      if (w.layout == WeightLayout::bf16_panels) {  // kernels/bf16_panels.h
        DS_CHECK(w.shape.size() == 2, "bf16 panel weight ", w.name, " must be 2-D");
        std::memcpy(&bits, w.data + bf16_panel_offset(w.shape[1], index / w.shape[1], index % w.shape[1]), 2);
        return bf16_to_float(bits);
      }
      std::memcpy(&bits, w.data + 2 * index, 2);
      return bf16_to_float(bits);
    }
    case DType::F16: {
      uint16_t bits;
      std::memcpy(&bits, w.data + 2 * index, 2);
      return fp16_to_float(bits);
    }
    case DType::I8: {  // the panel layout of int8_panels.h
      DS_CHECK(w.scale_group == kInt8ScaleGroup && w.shape.size() == 2, "int8 weight ", w.name, " not packed");
      const int64_t cols = w.shape[1], row = index / cols, col = index % cols;
      return static_cast<float>(int8_weight_q(w, row, col)) * int8_weight_scale(w, row, col / kInt8ScaleGroup);
    }
    default: DS_CHECK(false, "weight ", w.name, " has unsupported dtype ", dtype_name(w.dtype));
  }
  return 0.0f;
}

// out[0 .. count) = w[first .. first + count) as fp32.
inline void weight_span(const TensorView& w, int64_t first, int64_t count, float* out) {
  if (w.dtype == DType::F32) {
    std::memcpy(out, w.data + 4 * first, 4 * count);
    return;
  }
  for (int64_t i = 0; i < count; ++i) out[i] = weight_at(w, first + i);
}

}  // namespace ds
