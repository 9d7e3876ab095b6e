#include "kernels/formats/fp8/fp8_blocks_format.h"

#include <cstring>

#include "kernels/formats/fp8/block_fp8.h"

namespace ds {

namespace {

class Fp8BlocksFormat final : public Fp8Format {
 public:
  WeightFormatId id() const override { return WeightFormatId::fp8_blocks; }
  const char* name() const override { return "block FP8"; }
  int64_t panel_rows() const override { return 1; }
  // The codes; the scales stay where the checkpoint keeps them.
  uint64_t bytes(int64_t n, int64_t k) const override { return static_cast<uint64_t>(n * k); }
  void row_codes(const TensorView& w, int64_t row, int64_t first, int64_t count, uint8_t* codes) const override {
    std::memcpy(codes, w.data + row * w.shape[1] + first, static_cast<size_t>(count));
  }
  float block_scale(const TensorView& w, int64_t row, int64_t block) const override {
    return fp8_block_scale(w, row, block * kFp8Block);
  }
  std::optional<FastMatmul> fast_matmul(Isa, bool) const override { return std::nullopt; }
};

}  // namespace

const Fp8Format& fp8_blocks_format() {
  static const Fp8BlocksFormat format;
  return format;
}

}  // namespace ds
