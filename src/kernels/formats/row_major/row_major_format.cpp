#include "kernels/formats/row_major/row_major_format.h"

#include <algorithm>
#include <cstring>

#include "kernels/formats/row_major/row_major_kernels.h"
#include "kernels/weight_access.h"
#include "util/check.h"
#include "util/float16.h"

namespace ds {

namespace {

// Output rows per thread range: the kernels' widest tile of weight rows, so ranges never split one.
constexpr int64_t kRowsPerPanel = 16;

// x rounded to bf16 as bits, [m, k] uint16 (AVX-512 BF16 kernel).
uint64_t bf16_rows_bytes(int64_t m, int64_t k, const ActivationOptions&) { return static_cast<uint64_t>(2 * m * k); }
void prepare_bf16_rows_avx512(const float* x, int64_t, int64_t k, const ActivationOptions&, int64_t r_begin,
                              int64_t r_end, std::byte* out) {
  kernels::round_to_bf16_avx512(x + r_begin * k, (r_end - r_begin) * k, reinterpret_cast<uint16_t*>(out) + r_begin * k);
}
constexpr ActivationCodec kBf16Rows{"bf16 rows", bf16_rows_bytes, prepare_bf16_rows_avx512};

// x as fp32 [m, k], rounded through bf16 in fast mode (fp32-FMA kernels on bf16 inputs).
uint64_t f32_rows_bytes(int64_t m, int64_t k, const ActivationOptions&) { return static_cast<uint64_t>(4 * m * k); }
void prepare_f32_rows(const float* x, int64_t, int64_t k, const ActivationOptions& options, int64_t r_begin,
                      int64_t r_end, std::byte* out) {
  float* rows = reinterpret_cast<float*>(out);
  if (!options.round_bf16) {
    std::memcpy(rows + r_begin * k, x + r_begin * k, static_cast<size_t>(4 * (r_end - r_begin) * k));
    return;
  }
  for (int64_t i = r_begin * k; i < r_end * k; ++i) rows[i] = bf16_to_float(float_to_bf16(x[i]));
}
constexpr ActivationCodec kF32Rows{"fp32 rows", f32_rows_bytes, prepare_f32_rows};

template <void (*Kernel)(const float*, int64_t, const TensorView&, int64_t, int64_t, float*)>
void f32_panels(const std::byte* a, int64_t m, const ActivationOptions&, const TensorView& w, int64_t panel_begin,
                int64_t panel_end, float* y) {
  Kernel(reinterpret_cast<const float*>(a), m, w, panel_begin * kRowsPerPanel,
         std::min(w.shape[0], panel_end * kRowsPerPanel), y);
}
void bf16_panels_avx512(const std::byte* a, int64_t m, const ActivationOptions&, const TensorView& w,
                        int64_t panel_begin, int64_t panel_end, float* y) {
  kernels::matmul_bf16_avx512(reinterpret_cast<const uint16_t*>(a), m, w, panel_begin * kRowsPerPanel,
                              std::min(w.shape[0], panel_end * kRowsPerPanel), y);
}

class RowMajorFormat final : public WeightFormat {
 public:
  explicit RowMajorFormat(DType dtype) : dtype_(dtype) {}
  WeightFormatId id() const override { return WeightFormatId::stored; }
  const char* name() const override { return dtype_name(dtype_).data(); }  // names are literals
  int64_t panel_rows() const override { return kRowsPerPanel; }
  uint64_t bytes(int64_t n, int64_t k) const override { return static_cast<uint64_t>(n * k * dtype_size(dtype_)); }
  void dequantize_row(const TensorView& w, int64_t row, float* out) const override {
    weight_span(w, row * w.shape[1], w.shape[1], out);
  }
  bool gatherable() const override { return true; }
  bool leading_rows_in_place() const override { return true; }
  void gather_rows(const TensorView& w, std::span<const int32_t> rows, std::byte* packed) const override {
    const uint64_t row_bytes = bytes(1, w.shape[1]);
    for (size_t r = 0; r < rows.size(); ++r)
      std::memcpy(packed + r * row_bytes, w.data + static_cast<uint64_t>(rows[r]) * row_bytes, row_bytes);
  }
  std::optional<FastMatmul> fast_matmul(Isa isa, bool round_input_bf16) const override {
    if (has_avx512(isa) && round_input_bf16 && dtype_ == DType::BF16) return FastMatmul{&kBf16Rows, bf16_panels_avx512};
    if (has_avx512(isa)) return FastMatmul{&kF32Rows, f32_panels<kernels::matmul_f32_avx512>};
    if (isa == Isa::avx2) return FastMatmul{&kF32Rows, f32_panels<kernels::matmul_f32_avx2>};
    return std::nullopt;
  }

 private:
  DType dtype_;
};

}  // namespace

const WeightFormat& row_major_format(DType dtype) {
  static const RowMajorFormat bf16(DType::BF16), f16(DType::F16), f32(DType::F32);
  switch (dtype) {
    case DType::BF16: return bf16;
    case DType::F16: return f16;
    case DType::F32: return f32;
    default: DS_CHECK(false, "no matmul kernel reads ", dtype_name(dtype), " weights (expected BF16, F16 or F32)");
  }
  return f32;
}

}  // namespace ds
