#include "kernels/formats/bf16_panels/bf16_panels_format.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/formats/bf16_panels/bf16_panels.h"
#include "kernels/formats/bf16_panels/bf16_panels_kernels.h"
#include "util/check.h"
#include "util/float16.h"

namespace ds {

namespace {

// Token tiles of input pairs, [m · pairs] uint32 (bf16_panels_kernels.h).
uint64_t tiles_bytes(int64_t m, int64_t k, const ActivationOptions&) {
  return static_cast<uint64_t>(4 * kernels::bf16_activation_words(m, k));
}
void prepare_tiles_avx512(const float* x, int64_t m, int64_t k, const ActivationOptions&, int64_t r_begin,
                          int64_t r_end, std::byte* out) {
  kernels::pack_bf16_activations_avx512(x, m, k, r_begin, r_end, reinterpret_cast<uint32_t*>(out));
}
constexpr ActivationCodec kTokenTiles{"bf16 token tiles", tiles_bytes, prepare_tiles_avx512};

// Token rows of input pairs for the AMX tiles, [round_up(m, 16), row words] uint32 (bf16_panels_kernels.h).
uint64_t rows_bytes(int64_t m, int64_t k, const ActivationOptions&) {
  return static_cast<uint64_t>(4 * kernels::bf16_amx_activation_words(m, k));
}
void prepare_rows_amx(const float* x, int64_t m, int64_t k, const ActivationOptions&, int64_t r_begin, int64_t r_end,
                      std::byte* out) {
  kernels::pack_bf16_rows_amx(x, m, k, r_begin, r_end, reinterpret_cast<uint32_t*>(out));
}
constexpr ActivationCodec kTokenRows{"bf16 token rows (AMX)", rows_bytes, prepare_rows_amx};

// fp32 pair rows, [m, bf16_f32_pair_row_floats(k)] floats (AVX2 kernel: both modes).
uint64_t pair_rows_bytes(int64_t m, int64_t k, const ActivationOptions&) {
  return static_cast<uint64_t>(4 * m * kernels::bf16_f32_pair_row_floats(k));
}
void prepare_pair_rows(const float* x, int64_t, int64_t k, const ActivationOptions& options, int64_t r_begin,
                       int64_t r_end, std::byte* out) {
  kernels::pack_f32_pair_rows(x, k, options.round_bf16, r_begin, r_end, reinterpret_cast<float*>(out));
}
constexpr ActivationCodec kPairRows{"fp32 pair rows", pair_rows_bytes, prepare_pair_rows};

void panels_avx512(const std::byte* a, int64_t m, const ActivationOptions&, const TensorView& w, int64_t panel_begin,
                   int64_t panel_end, float* y) {
  kernels::matmul_bf16_panels_avx512(reinterpret_cast<const uint32_t*>(a), m, w, panel_begin, panel_end, y);
}
void panels_avx2(const std::byte* a, int64_t m, const ActivationOptions&, const TensorView& w, int64_t panel_begin,
                 int64_t panel_end, float* y) {
  kernels::matmul_bf16_panels_avx2(reinterpret_cast<const float*>(a), m, w, panel_begin, panel_end, y);
}
void panels_amx(const std::byte* a, int64_t m, const ActivationOptions&, const TensorView& w, int64_t panel_begin,
                int64_t panel_end, float* y) {
  kernels::matmul_bf16_panels_amx(reinterpret_cast<const uint32_t*>(a), m, w, panel_begin, panel_end, y);
}

class Bf16PanelsFormat final : public WeightFormat {
 public:
  WeightFormatId id() const override { return WeightFormatId::bf16_panels; }
  const char* name() const override { return "bf16 panels"; }
  int64_t panel_rows() const override { return kBf16PanelRows; }
  uint64_t bytes(int64_t n, int64_t k) const override { return static_cast<uint64_t>(bf16_packed_bytes(n, k)); }
  bool packable() const override { return true; }
  void pack(const TensorView& source, int64_t panel_begin, int64_t panel_end, std::byte* packed) const override {
    DS_CHECK(source.dtype == DType::BF16 && source.format == WeightFormatId::stored && source.shape.size() == 2,
             "bf16 panels are packed from stored 2-D BF16 weights; ", source.name, " is ", dtype_name(source.dtype));
    const int64_t n = source.shape[0], k = source.shape[1];
    bf16_pack_panels(source.data, n, k, panel_begin * kBf16PanelRows, std::min(n, panel_end * kBf16PanelRows), packed);
  }
  void dequantize_row(const TensorView& w, int64_t row, float* out) const override {
    const int64_t k = w.shape[1];
    for (int64_t col = 0; col < k; ++col) {
      uint16_t bits;
      std::memcpy(&bits, w.data + bf16_panel_offset(k, row, col), 2);
      out[col] = bf16_to_float(bits);
    }
  }
  // The rows' bf16 bits staged row-major, then packed as a checkpoint's weight is.
  bool gatherable() const override { return true; }
  bool leading_rows_in_place() const override { return true; }
  void gather_rows(const TensorView& w, std::span<const int32_t> rows, std::byte* packed) const override {
    const auto n = static_cast<int64_t>(rows.size());
    const int64_t k = w.shape[1];
    std::vector<uint16_t> staged(static_cast<size_t>(n * k));  // [n, k] bf16
    for (int64_t r = 0; r < n; ++r)
      for (int64_t col = 0; col < k; ++col)
        std::memcpy(&staged[static_cast<size_t>(r * k + col)], w.data + bf16_panel_offset(k, rows[static_cast<size_t>(r)], col), 2);
    bf16_pack_panels(reinterpret_cast<const std::byte*>(staged.data()), n, k, 0, n, packed);
  }
  // `vdpbf16ps` and `tdpbf16ps` multiply bf16 inputs, so on AVX-512 only fast mode runs a kernel and
  // fp32 activations (f32 mode) go through the reference. With AMX every batch size computes the tile
  // arithmetic (decode in vectors that keep it, matmul_bf16_panels_amx.cpp), so a row's bits never
  // depend on how many rows share its call. AVX2 multiplies in fp32, so it runs both modes.
  std::optional<FastMatmul> fast_matmul(Isa isa, bool round_input_bf16) const override {
    if (isa == Isa::amx && round_input_bf16) return FastMatmul{&kTokenRows, panels_amx};
    if (isa == Isa::avx512 && round_input_bf16) return FastMatmul{&kTokenTiles, panels_avx512};
    if (isa == Isa::avx2) return FastMatmul{&kPairRows, panels_avx2};
    return std::nullopt;
  }
};

}  // namespace

const ActivationCodec& bf16_token_tiles() { return kTokenTiles; }
const ActivationCodec& bf16_f32_pair_rows() { return kPairRows; }

const WeightFormat& bf16_panels_format() {
  static const Bf16PanelsFormat format;
  return format;
}

}  // namespace ds
