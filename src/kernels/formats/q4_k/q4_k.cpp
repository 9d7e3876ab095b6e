#include "kernels/formats/q4_k/q4_k.h"

#include <cmath>
#include <cstring>

#include "util/float16.h"

namespace ds {

void k_scale_min(const uint8_t* scales12, int64_t j, int* sc, int* m) {
  if (j < 4) {
    *sc = scales12[j] & 63;
    *m = scales12[j + 4] & 63;
  } else {
    *sc = (scales12[j + 4] & 15) | (scales12[j - 4] >> 6) << 4;
    *m = (scales12[j + 4] >> 4) | (scales12[j] >> 6) << 4;
  }
}

namespace {

float fp16_at(const std::byte* at) {
  uint16_t bits;
  std::memcpy(&bits, at, 2);
  return fp16_to_float(bits);
}

const uint8_t* scale_bytes(const std::byte* block) { return reinterpret_cast<const uint8_t*>(block + 4); }

}  // namespace

void ScaleMinType::dequantize(const std::byte* block, float* out) const {
  uint8_t codes[kSuperblock];
  read_codes(block, codes);
  const float d = fp16_at(block), dmin = fp16_at(block + 2);
  for (int64_t j = 0; j < kGroupsPerSuperblock; ++j) {
    int sc, m;
    k_scale_min(scale_bytes(block), j, &sc, &m);
    const float scale = d * static_cast<float>(sc), minimum = dmin * static_cast<float>(m);
    for (int64_t i = 32 * j; i < 32 * j + 32; ++i) out[i] = scale * static_cast<float>(codes[i]) - minimum;
  }
}

float ScaleMinType::accumulate(const std::byte* block, const uint8_t* codes, int64_t j, const ActivationGroup& x,
                               float acc) const {
  int32_t dot = 0;
  for (int64_t i = 0; i < kKquantGroup; ++i) dot += codes[32 * j + i] * x.q[i];
  int sc, m;
  k_scale_min(scale_bytes(block), j, &sc, &m);
  const float scale = fp16_at(block) * static_cast<float>(sc), minimum = fp16_at(block + 2) * static_cast<float>(m);
  acc = std::fma(static_cast<float>(dot), scale * x.scale, acc);
  return std::fma(-minimum, x.scaled_sum, acc);
}

namespace {

constexpr int64_t kCodes = 16;  // the 128 code bytes follow d, dmin and the scales

class Q4K final : public ScaleMinType {
 public:
  Q4K() : ScaleMinType({"Q4_K", WeightFormatId::q4_k, WeightFormatId::q4_k_panels, 144, 4, kScaleMinFields,
                          kernels::matmul_q4_k_avx512, kernels::matmul_q4_k_avx2,
                          kernels::matmul_q4_k_amx}) {}
  void read_codes(const std::byte* block, uint8_t* codes) const override {
    const auto* q = reinterpret_cast<const uint8_t*>(block + kCodes);
    for (int64_t e = 0; e < kSuperblock; ++e) {
      const int64_t chunk = e / 64, at = e % 64;
      const uint8_t byte = q[32 * chunk + at % 32];
      codes[e] = at < 32 ? byte & 15 : byte >> 4;
    }
  }
  void write_codes(const uint8_t* codes, std::byte* block) const override {
    auto* q = reinterpret_cast<uint8_t*>(block + kCodes);
    for (int64_t chunk = 0; chunk < 4; ++chunk)
      for (int64_t i = 0; i < 32; ++i)
        q[32 * chunk + i] = static_cast<uint8_t>((codes[64 * chunk + i] & 15) | (codes[64 * chunk + 32 + i] & 15) << 4);
  }
};

}  // namespace

const KquantType& q4_k_type() {
  static const Q4K type;
  return type;
}

}  // namespace ds
