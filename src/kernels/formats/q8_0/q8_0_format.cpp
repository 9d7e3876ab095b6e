#include "kernels/formats/q8_0/q8_0_format.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/formats/int8_panels/int8_panels.h"
#include "kernels/formats/int8_panels/int8_panels_format.h"
#include "util/check.h"
#include "util/float16.h"

namespace ds {
namespace {

static_assert(kQ8_0Block == kInt8ScaleGroup, "Q8_0 blocks map one to one onto int8 panel groups");

float block_scale(const std::byte* block) {
  uint16_t bits;
  std::memcpy(&bits, block, 2);
  return fp16_to_float(bits);
}

const std::byte* row_blocks(const TensorView& w, int64_t row) {
  return w.data + row * (w.shape[1] / kQ8_0Block) * kQ8_0BlockBytes;
}

class Q8_0Format final : public WeightFormat {
 public:
  WeightFormatId id() const override { return WeightFormatId::q8_0; }
  const char* name() const override { return "Q8_0"; }
  int64_t panel_rows() const override { return 1; }
  uint64_t bytes(int64_t n, int64_t k) const override {
    return static_cast<uint64_t>(n * (k / kQ8_0Block) * kQ8_0BlockBytes);
  }
  void dequantize_row(const TensorView& w, int64_t row, float* out) const override {
    const std::byte* blocks = row_blocks(w, row);
    for (int64_t b = 0; b < w.shape[1] / kQ8_0Block; ++b)
      q8_0_dequantize_block(blocks + b * kQ8_0BlockBytes, out + b * kQ8_0Block);
  }
  std::optional<FastMatmul> fast_matmul(Isa, bool) const override { return std::nullopt; }
};

class Q8_0Int8PanelsRoute final : public WeightFormat {
 public:
  WeightFormatId id() const override { return WeightFormatId::q8_0_int8_panels; }
  const char* name() const override { return "int8 panels (from Q8_0)"; }
  int64_t panel_rows() const override { return kInt8PanelRows; }
  uint64_t bytes(int64_t n, int64_t k) const override { return int8_panels_format().bytes(n, k); }
  bool packable() const override { return true; }
  void pack(const TensorView& source, int64_t panel_begin, int64_t panel_end, std::byte* packed) const override {
    DS_CHECK(source.format == WeightFormatId::q8_0 && source.shape.size() == 2, "int8 panels from Q8_0 need a 2-D Q8_0 weight; ",
             source.name, " is not");
    const int64_t rows = source.shape[0], cols = source.shape[1], groups = cols / kQ8_0Block;
    std::vector<int8_t> q(static_cast<size_t>(cols));         // [k] one row's values
    std::vector<uint16_t> scales(static_cast<size_t>(groups));  // [k / 32] its block scales (fp16)
    int8_clear_packed(packed + panel_begin * int8_panel_bytes(cols), (panel_end - panel_begin) * kInt8PanelRows, cols);
    for (int64_t r = panel_begin * kInt8PanelRows; r < std::min(rows, panel_end * kInt8PanelRows); ++r) {
      const std::byte* blocks = row_blocks(source, r);
      for (int64_t g = 0; g < groups; ++g) {
        std::memcpy(&scales[g], blocks + g * kQ8_0BlockBytes, 2);
        std::memcpy(q.data() + g * kQ8_0Block, blocks + g * kQ8_0BlockBytes + 2, kQ8_0Block);
      }
      int8_pack_row(packed, cols, r, q.data(), scales.data());
    }
  }
  TensorView packed_view(const TensorView& source, const std::byte* packed) const override {
    return int8_panels_format().packed_view(source, packed);
  }
  // Only packing goes through the route; its results are int8 panels views.
  void dequantize_row(const TensorView& w, int64_t row, float* out) const override {
    int8_panels_format().dequantize_row(w, row, out);
  }
  std::optional<FastMatmul> fast_matmul(Isa isa, bool round_input_bf16) const override {
    return int8_panels_format().fast_matmul(isa, round_input_bf16);
  }
};

}  // namespace

void q8_0_dequantize_block(const std::byte* block, float* out) {
  const float d = block_scale(block);
  for (int64_t i = 0; i < kQ8_0Block; ++i)
    out[i] = d * static_cast<float>(static_cast<int8_t>(block[2 + i]));
}

const WeightFormat& q8_0_format() {
  static const Q8_0Format format;
  return format;
}

const WeightFormat& q8_0_int8_panels_route() {
  static const Q8_0Int8PanelsRoute format;
  return format;
}

}  // namespace ds
