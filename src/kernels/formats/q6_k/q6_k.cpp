#include "kernels/formats/q6_k/q6_k.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/formats/round_even.h"
#include "util/float16.h"

namespace ds {
namespace {

constexpr int64_t kHigh = 128, kScales = 192, kD = 208;  // byte offsets in a block
constexpr KquantField kFields[] = {{kScales, 1, 16}, {kD, 2, 1}};

int8_t scale_of(const std::byte* block, int64_t sub) { return static_cast<int8_t>(block[kScales + sub]); }
float d_of(const std::byte* block) {
  uint16_t bits;
  std::memcpy(&bits, block + kD, 2);
  return fp16_to_float(bits);
}

class Q6K final : public KquantType {
 public:
  Q6K() : KquantType({"Q6_K", WeightFormatId::q6_k, WeightFormatId::q6_k_panels, 210, 6, kFields,
                          kernels::matmul_q6_k_avx512, kernels::matmul_q6_k_avx2,
                          kernels::matmul_q6_k_amx}) {}
  void read_codes(const std::byte* block, uint8_t* codes) const override {
    const auto* low = reinterpret_cast<const uint8_t*>(block);
    const auto* high = reinterpret_cast<const uint8_t*>(block + kHigh);
    for (int64_t e = 0; e < kSuperblock; ++e) {
      const int64_t half = e / 128, at = e % 128;
      const int low_bits = (low[64 * half + at % 64] >> (4 * (at / 64))) & 15;
      const int high_bits = (high[32 * half + at % 32] >> (2 * (at / 32))) & 3;
      codes[e] = static_cast<uint8_t>(low_bits | high_bits << 4);
    }
  }
  void write_codes(const uint8_t* codes, std::byte* block) const override {
    auto* low = reinterpret_cast<uint8_t*>(block);
    auto* high = reinterpret_cast<uint8_t*>(block + kHigh);
    std::memset(block, 0, kScales);
    for (int64_t e = 0; e < kSuperblock; ++e) {
      const int64_t half = e / 128, at = e % 128;
      low[64 * half + at % 64] |= static_cast<uint8_t>((codes[e] & 15) << (4 * (at / 64)));
      high[32 * half + at % 32] |= static_cast<uint8_t>(((codes[e] >> 4) & 3) << (2 * (at / 32)));
    }
  }
  void dequantize(const std::byte* block, float* out) const override {
    uint8_t codes[kSuperblock];
    read_codes(block, codes);
    const float d = d_of(block);
    for (int64_t sub = 0; sub < 16; ++sub) {
      const float scale = d * static_cast<float>(scale_of(block, sub));
      for (int64_t e = 16 * sub; e < 16 * sub + 16; ++e) out[e] = scale * static_cast<float>(codes[e] - 32);
    }
  }
  float accumulate(const std::byte* block, const uint8_t* codes, int64_t j, const ActivationGroup& x,
                   float acc) const override {
    int32_t dots[2] = {};
    for (int64_t half = 0; half < 2; ++half)
      for (int64_t i = 16 * half; i < 16 * half + 16; ++i) dots[half] += (codes[32 * j + i] - 32) * x.q[i];
    const float d = d_of(block);
    const float step_a = d * static_cast<float>(scale_of(block, 2 * j));
    const float step_b = d * static_cast<float>(scale_of(block, 2 * j + 1));
    const float t = std::fma(step_a, static_cast<float>(dots[0]), step_b * static_cast<float>(dots[1]));
    return std::fma(t, x.scale, acc);
  }
  bool quantizes() const override { return true; }
  // deltaserve's own quantiser: per sub-block of 16 the value of largest magnitude lands on the grid's
  // wider end (q − 32 = −32), the scale then refitted by least squares to the rounded codes; the 16
  // scales are rounded to int8 steps of d = max |scale| / 127 (fp16) and the codes on the final grid.
  void quantize(const float* values, std::byte* block) const override {
    float scales[16];
    float max_scale = 0.0f;
    for (int64_t sub = 0; sub < 16; ++sub) {
      const float* w = values + 16 * sub;
      float extreme = 0.0f;
      for (int64_t i = 0; i < 16; ++i) extreme = std::fabs(w[i]) > std::fabs(extreme) ? w[i] : extreme;
      float scale = extreme / -32.0f;
      if (scale != 0.0f) {  // one least-squares refit of the scale to the rounded codes
        double qq = 0, qw = 0;
        for (int64_t i = 0; i < 16; ++i) {
          const double q = round_even(std::clamp(w[i] / scale, -32.0f, 31.0f));
          qq += q * q, qw += q * w[i];
        }
        if (qq > 0 && qw / qq != 0) scale = static_cast<float>(qw / qq);
      }
      scales[sub] = scale;
      max_scale = std::max(max_scale, std::fabs(scale));
    }
    const uint16_t d_bits = float_to_fp16(max_scale / 127.0f);
    const float d = fp16_to_float(d_bits);
    uint8_t codes[kSuperblock];
    for (int64_t sub = 0; sub < 16; ++sub) {
      const auto sc = static_cast<int8_t>(d > 0.0f ? round_even(std::clamp(scales[sub] / d, -128.0f, 127.0f)) : 0.0f);
      block[kScales + sub] = static_cast<std::byte>(sc);
      const float step = d * static_cast<float>(sc);
      for (int64_t i = 16 * sub; i < 16 * sub + 16; ++i)
        codes[i] = static_cast<uint8_t>(32 + (step != 0.0f ? round_even(std::clamp(values[i] / step, -32.0f, 31.0f)) : 0.0f));
    }
    std::memcpy(block + kD, &d_bits, 2);
    write_codes(codes, block);
  }
};

}  // namespace

const KquantType& q6_k_type() {
  static const Q6K type;
  return type;
}

}  // namespace ds
