#include "kernels/formats/q5_k/q5_k.h"

#include "kernels/formats/q4_k/q4_k.h"

namespace ds {
namespace {

constexpr int64_t kHigh = 16, kLow = 48;  // byte offsets of the high bits and the nibbles

class Q5K final : public ScaleMinType {
 public:
  Q5K() : ScaleMinType({"Q5_K", WeightFormatId::q5_k, WeightFormatId::q5_k_panels, 176, 5, kScaleMinFields,
                          kernels::matmul_q5_k_avx512, kernels::matmul_q5_k_avx2,
                          kernels::matmul_q5_k_amx}) {}
  void read_codes(const std::byte* block, uint8_t* codes) const override {
    const auto* high = reinterpret_cast<const uint8_t*>(block + kHigh);
    const auto* low = reinterpret_cast<const uint8_t*>(block + kLow);
    for (int64_t e = 0; e < kSuperblock; ++e) {
      const int64_t chunk = e / 64, at = e % 64;
      const uint8_t byte = low[32 * chunk + at % 32];
      codes[e] = static_cast<uint8_t>((at < 32 ? byte & 15 : byte >> 4) | ((high[e % 32] >> (e / 32)) & 1) << 4);
    }
  }
  void write_codes(const uint8_t* codes, std::byte* block) const override {
    auto* high = reinterpret_cast<uint8_t*>(block + kHigh);
    auto* low = reinterpret_cast<uint8_t*>(block + kLow);
    for (int64_t chunk = 0; chunk < 4; ++chunk)
      for (int64_t i = 0; i < 32; ++i)
        low[32 * chunk + i] = static_cast<uint8_t>((codes[64 * chunk + i] & 15) | (codes[64 * chunk + 32 + i] & 15) << 4);
    for (int64_t i = 0; i < 32; ++i) {
      uint8_t bits = 0;
      for (int64_t j = 0; j < 8; ++j) bits |= static_cast<uint8_t>(((codes[32 * j + i] >> 4) & 1) << j);
      high[i] = bits;
    }
  }
};

}  // namespace

const KquantType& q5_k_type() {
  static const Q5K type;
  return type;
}

}  // namespace ds
