#include "kernels/formats/fp8/fp8_panels_format.h"

#include <algorithm>
#include <cstring>

#include "kernels/formats/bf16_panels/bf16_panels_format.h"
#include "kernels/formats/fp8/fp8_kernels.h"
#include "kernels/formats/fp8/fp8_panels.h"
#include "util/check.h"

namespace ds {

namespace {

void panels_avx512(const std::byte* a, int64_t m, const ActivationOptions&, const TensorView& w, int64_t panel_begin,
                   int64_t panel_end, float* y) {
  kernels::matmul_fp8_panels_avx512(reinterpret_cast<const uint32_t*>(a), m, w, panel_begin, panel_end, y);
}
void panels_avx2(const std::byte* a, int64_t m, const ActivationOptions&, const TensorView& w, int64_t panel_begin,
                 int64_t panel_end, float* y) {
  kernels::matmul_fp8_panels_avx2(reinterpret_cast<const float*>(a), m, w, panel_begin, panel_end, y);
}

// The kernels widen codes with `vpermi2b` (AVX-512 VBMI), beside AVX-512 BF16 (Isa::avx512 and up).
bool has_avx512_vbmi() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512vbmi");
}

class Fp8PanelsFormat final : public Fp8Format {
 public:
  WeightFormatId id() const override { return WeightFormatId::fp8_panels; }
  const char* name() const override { return "FP8 panels"; }
  int64_t panel_rows() const override { return kFp8PanelRows; }
  uint64_t bytes(int64_t n, int64_t k) const override { return static_cast<uint64_t>(fp8_packed_bytes(n, k)); }
  bool packable() const override { return true; }
  void pack(const TensorView& source, int64_t panel_begin, int64_t panel_end, std::byte* packed) const override {
    DS_CHECK(source.format == WeightFormatId::fp8_blocks && source.shape.size() == 2,
             "FP8 panels are packed from block-FP8 weights; ", source.name, " is not one");
    const int64_t n = source.shape[0], k = source.shape[1], panel_bytes = fp8_panel_bytes(k);
    for (int64_t p = panel_begin; p < panel_end; ++p) {
      std::byte* panel = packed + p * panel_bytes;
      std::memset(panel, 0, static_cast<size_t>(panel_bytes));
      auto* scales = reinterpret_cast<float*>(panel);
      for (int64_t b = 0; b < fp8_blocks(k); ++b) scales[b] = fp8_block_scale(source, p * kFp8PanelRows, b * kFp8Block);
      std::byte* codes = panel + fp8_header_bytes(k);
      for (int64_t i = 0; i < kFp8PanelRows && p * kFp8PanelRows + i < n; ++i) {
        const std::byte* row = source.data + (p * kFp8PanelRows + i) * k;
        const int64_t even = fp8_pair_position(i, 0), odd = fp8_pair_position(i, 1);
        for (int64_t col = 0; col < k; col += 2) {
          codes[col / 2 * kFp8PairBytes + even] = row[col];
          if (col + 1 < k) codes[col / 2 * kFp8PairBytes + odd] = row[col + 1];
        }
      }
    }
  }
  TensorView packed_view(const TensorView& source, const std::byte* packed) const override {
    TensorView view = WeightFormat::packed_view(source, packed);
    view.block_scales = nullptr;  // the panels hold their scales
    return view;
  }
  void row_codes(const TensorView& w, int64_t row, int64_t first, int64_t count, uint8_t* codes) const override {
    for (int64_t i = 0; i < count; ++i) codes[i] = static_cast<uint8_t>(w.data[fp8_panel_offset(w.shape[1], row, first + i)]);
  }
  float block_scale(const TensorView& w, int64_t row, int64_t block) const override {
    float scale;
    std::memcpy(&scale, w.data + row / kFp8PanelRows * fp8_panel_bytes(w.shape[1]) + 4 * block, 4);
    return scale;
  }
  // Fast mode only: the kernels multiply bf16 inputs (`vdpbf16ps`); f32 mode runs the reference.
  std::optional<FastMatmul> fast_matmul(Isa isa, bool round_input_bf16) const override {
    static const bool vbmi = has_avx512_vbmi();
    if (!round_input_bf16) return std::nullopt;  // f32 mode: the plain reference (fp8_format.h)
    if (has_avx512(isa) && vbmi) return FastMatmul{&bf16_token_tiles(), panels_avx512};
    if (isa >= Isa::avx2) return FastMatmul{&bf16_f32_pair_rows(), panels_avx2};
    return std::nullopt;
  }
};

}  // namespace

const Fp8Format& fp8_panels_format() {
  static const Fp8PanelsFormat format;
  return format;
}

}  // namespace ds
