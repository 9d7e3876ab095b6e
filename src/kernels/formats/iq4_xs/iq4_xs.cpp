#include "kernels/formats/iq4_xs/iq4_xs.h"

#include <cmath>
#include <cstring>

#include "util/float16.h"

namespace ds {
namespace {

constexpr int64_t kScalesHigh = 2, kScalesLow = 4, kCodes = 8;  // byte offsets in a block
constexpr KquantField kFields[] = {{0, 2, 1}, {kScalesHigh, 2, 1}, {kScalesLow, 1, 4}};

float d_of(const std::byte* block) {
  uint16_t bits;
  std::memcpy(&bits, block, 2);
  return fp16_to_float(bits);
}

// ls_j − 32, in [−32, 31].
int scale_of(const std::byte* block, int64_t j) {
  uint16_t high;
  std::memcpy(&high, block + kScalesHigh, 2);
  const auto low = static_cast<uint8_t>(block[kScalesLow + j / 2]);
  return (((low >> (4 * (j % 2))) & 15) | ((high >> (2 * j)) & 3) << 4) - 32;
}

class Iq4Xs final : public KquantType {
 public:
  Iq4Xs() : KquantType({"IQ4_XS", WeightFormatId::iq4_xs, WeightFormatId::iq4_xs_panels, 136, 4, kFields,
                          kernels::matmul_iq4_xs_avx512, kernels::matmul_iq4_xs_avx2,
                          kernels::matmul_iq4_xs_amx}) {}
  void read_codes(const std::byte* block, uint8_t* codes) const override {
    const auto* q = reinterpret_cast<const uint8_t*>(block + kCodes);
    for (int64_t e = 0; e < kSuperblock; ++e) {
      const int64_t j = e / 32, at = e % 32;
      const uint8_t byte = q[16 * j + at % 16];
      codes[e] = at < 16 ? byte & 15 : byte >> 4;
    }
  }
  void write_codes(const uint8_t* codes, std::byte* block) const override {
    auto* q = reinterpret_cast<uint8_t*>(block + kCodes);
    for (int64_t j = 0; j < 8; ++j)
      for (int64_t i = 0; i < 16; ++i)
        q[16 * j + i] = static_cast<uint8_t>((codes[32 * j + i] & 15) | (codes[32 * j + 16 + i] & 15) << 4);
  }
  void dequantize(const std::byte* block, float* out) const override {
    uint8_t codes[kSuperblock];
    read_codes(block, codes);
    const float d = d_of(block);
    for (int64_t j = 0; j < kGroupsPerSuperblock; ++j) {
      const float scale = d * static_cast<float>(scale_of(block, j));
      for (int64_t e = 32 * j; e < 32 * j + 32; ++e) out[e] = scale * static_cast<float>(kIq4Values[codes[e]]);
    }
  }
  float accumulate(const std::byte* block, const uint8_t* codes, int64_t j, const ActivationGroup& x,
                   float acc) const override {
    int32_t dot = 0;
    for (int64_t i = 0; i < kKquantGroup; ++i) dot += kIq4Values[codes[32 * j + i]] * x.q[i];
    const float step = d_of(block) * static_cast<float>(scale_of(block, j));
    return std::fma(static_cast<float>(dot), step * x.scale, acc);
  }
};

}  // namespace

const KquantType& iq4_xs_type() {
  static const Iq4Xs type;
  return type;
}

}  // namespace ds
