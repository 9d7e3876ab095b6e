// Scalar access to the elements of a tensor as stored (bf16 / f16 / f32, row-major), for reference
// kernels: norms, conv taps, gates, embeddings. Packed matmul weights are read through their format
// (kernels/formats/weight_format.h: dequantize_row).
#pragma once

#include <cstring>
#include <vector>

#include "io/tensor_view.h"
#include "util/check.h"
#include "util/float16.h"

namespace ds {

// Calls loop(read), read(element_index) → fp32 in w's dtype: the dtype is decided once for a whole
// loop, not per element.
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

// A depthwise conv's taps as Backend::causal_conv1d_silu reads them, from the checkpoint's conv1d
// [channels, 1, K]: [K, channels] fp32, taps[j · channels + c] = w[c, 0, j]. Made once at load (the
// model keeps them), so no conv call converts or transposes its weight.
inline std::vector<float> conv_taps(const TensorView& conv1d) {
  DS_CHECK(conv1d.shape.size() == 3 && conv1d.shape[1] == 1, "conv taps from ", conv1d.name, ": expected [channels, 1, K]");
  const int64_t channels = conv1d.shape[0], kernel = conv1d.shape[2];
  std::vector<float> taps(static_cast<size_t>(kernel * channels));  // [K, channels]
  with_weight_reader(conv1d, [&](auto read) {
    for (int64_t j = 0; j < kernel; ++j)
      for (int64_t c = 0; c < channels; ++c) taps[static_cast<size_t>(j * channels + c)] = read(c * kernel + j);
  });
  return taps;
}

}  // namespace ds
