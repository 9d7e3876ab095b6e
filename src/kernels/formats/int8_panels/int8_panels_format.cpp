#include "kernels/formats/int8_panels/int8_panels_format.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/formats/int8_panels/int8_kernels.h"
#include "kernels/formats/int8_panels/int8_panels.h"
#include "kernels/formats/round_even.h"
#include "util/check.h"
#include "util/float16.h"

namespace ds {

namespace {

uint64_t activation_bytes(int64_t m, int64_t k, const ActivationOptions& options) {
  return int8_activation_bytes(m, k, options.planes);
}
template <void (*Quantize)(const float*, int64_t, int64_t, int64_t, const Int8Activations&)>
void prepare(const float* x, int64_t m, int64_t k, const ActivationOptions& options, int64_t r_begin, int64_t r_end,
             std::byte* out) {
  Quantize(x, k, r_begin, r_end, int8_activations_in(out, m, k, options.planes));
}
constexpr ActivationCodec kVnniActivations{"int8 groups (AVX-512)", activation_bytes,
                                           prepare<kernels::quantize_activations_avx512>};
constexpr ActivationCodec kAvx2Activations{"int8 groups (AVX2)", activation_bytes,
                                           prepare<kernels::quantize_activations_avx2>};

template <void (*Kernel)(const Int8Activations&, int64_t, const TensorView&, int64_t, int64_t, float*)>
void run_panels(const std::byte* a, int64_t m, const ActivationOptions& options, const TensorView& w, int64_t panel_begin,
            int64_t panel_end, float* y) {
  // The kernels only read the activations; the view type is shared with the quantisers.
  Kernel(int8_activations_in(const_cast<std::byte*>(a), m, w.shape[1], options.planes), m, w, panel_begin, panel_end, y);
}

class Int8PanelsFormat final : public WeightFormat {
 public:
  WeightFormatId id() const override { return WeightFormatId::int8_panels; }
  const char* name() const override { return "int8 panels"; }
  int64_t panel_rows() const override { return kInt8PanelRows; }
  uint64_t bytes(int64_t n, int64_t k) const override { return static_cast<uint64_t>(int8_packed_bytes(n, k)); }
  bool packable() const override { return true; }
  // Quantises rows of any source format, through its reference values.
  void pack(const TensorView& source, int64_t panel_begin, int64_t panel_end, std::byte* packed) const override {
    DS_CHECK(source.shape.size() == 2, "int8 panels are packed from 2-D weights; ", source.name, " is not");
    const int64_t rows = source.shape[0], cols = source.shape[1], groups = int8_groups(cols);
    const WeightFormat& from = format_of(source);
    std::vector<float> row(static_cast<size_t>(cols));                          // [k] source row
    std::vector<int8_t> q(static_cast<size_t>(groups * kInt8ScaleGroup), 0);  // [groups · 32]
    std::vector<uint16_t> scales(static_cast<size_t>(groups));                  // [groups] fp16
    const int64_t panel_bytes = int8_panel_bytes(cols);
    int8_clear_packed(packed + panel_begin * panel_bytes, (panel_end - panel_begin) * kInt8PanelRows, cols);
    for (int64_t r = panel_begin * kInt8PanelRows; r < std::min(rows, panel_end * kInt8PanelRows); ++r) {
      from.dequantize_row(source, r, row.data());
      for (int64_t g = 0; g < groups; ++g) {
        const int64_t lo = g * kInt8ScaleGroup, hi = std::min(cols, lo + kInt8ScaleGroup);
        float max_abs = 0.0f;
        for (int64_t c = lo; c < hi; ++c) max_abs = std::max(max_abs, std::fabs(row[c]));
        // The scale as stored (fp16); a group too small for it (max |w| < 127 · 2^-24) becomes zeros.
        scales[g] = float_to_fp16(max_abs > 0.0f ? max_abs / 127.0f : 1.0f);
        const float scale = fp16_to_float(scales[g]);
        for (int64_t c = lo; c < hi; ++c)
          q[c] = scale > 0.0f ? static_cast<int8_t>(static_cast<int32_t>(round_even(std::clamp(row[c] / scale, -127.0f, 127.0f))))
                              : 0;
      }
      int8_pack_row(packed, cols, r, q.data(), scales.data());
    }
  }
  TensorView packed_view(const TensorView& source, const std::byte* packed) const override {
    TensorView view = WeightFormat::packed_view(source, packed);
    view.dtype = DType::I8;
    return view;
  }
  // Each row's q and fp16 scale bits as they are: re-quantising the dequantised row is not exact (a
  // group whose scale underflowed to 0 would come back with scale 1).
  bool gatherable() const override { return true; }
  bool leading_rows_in_place() const override { return true; }
  void gather_rows(const TensorView& w, std::span<const int32_t> rows, std::byte* packed) const override {
    const auto n = static_cast<int64_t>(rows.size());
    const int64_t k = w.shape[1], groups = int8_groups(k);
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
  void dequantize_row(const TensorView& w, int64_t row, float* out) const override {
    for (int64_t col = 0; col < w.shape[1]; ++col)
      out[col] = static_cast<float>(int8_weight_q(w, row, col)) * int8_weight_scale(w, row, col / kInt8ScaleGroup);
  }
  void reference_matmul(const float* x, int64_t m, const TensorView& w, float* y, bool) const override {
    int8_panels_reference_matmul(x, m, w, y);
  }
  std::optional<FastMatmul> fast_matmul(Isa isa, bool) const override {
    // At Isa::amx, AMX-INT8 tiles from 2 tokens on (matmul_int8_amx hands single tokens to VNNI).
    static const bool vnni = has_avx512_vnni();
    if (isa == Isa::amx) return FastMatmul{&kVnniActivations, run_panels<kernels::matmul_int8_amx>};
    if (has_avx512(isa) && vnni)
      return FastMatmul{&kVnniActivations, run_panels<kernels::matmul_int8_avx512>};
    if (has_avx512(isa) || isa == Isa::avx2) return FastMatmul{&kAvx2Activations, run_panels<kernels::matmul_int8_avx2>};
    return std::nullopt;
  }
};

}  // namespace

const WeightFormat& int8_panels_format() {
  static const Int8PanelsFormat format;
  return format;
}

}  // namespace ds
