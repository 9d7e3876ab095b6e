#include "kernels/formats/kquant/kquant_activations.h"

#include "kernels/formats/int8_panels/int8_kernels.h"
#include "kernels/formats/kquant/kquant_type.h"

namespace ds {

namespace {
int64_t tiled_rows(int64_t m) { return (m + kKquantTokenTile - 1) / kKquantTokenTile * kKquantTokenTile; }
}  // namespace

uint64_t kquant_activation_bytes(int64_t m, int64_t k) {
  const int64_t groups = int8_groups(k);
  const int64_t sums = m * groups * (2 * 4 + 4), tiles = tiled_rows(m) * groups * 2 * 4;
  return int8_activation_bytes(m, k, 1) + static_cast<uint64_t>(sums + tiles);
}

KquantActivations kquant_activations_in(const std::byte* buffer, int64_t m, int64_t k) {
  // The kernels only read; the int8 view type is shared with the quantiser, which writes.
  auto* bytes = const_cast<std::byte*>(buffer);
  const int64_t groups = int8_groups(k);
  const uint64_t int8_bytes = int8_activation_bytes(m, k, 1);
  const auto* neg_half_sums = reinterpret_cast<const int32_t*>(bytes + int8_bytes);
  const auto* scaled_sums = reinterpret_cast<const float*>(bytes + int8_bytes + 8 * m * groups);
  const float* tile_scales = scaled_sums + m * groups;
  const float* tile_scaled_sums = tile_scales + tiled_rows(m) * groups;
  return KquantActivations{int8_activations_in(bytes, m, k, 1), scaled_sums, neg_half_sums, tile_scales,
                           tile_scaled_sums};
}

namespace {

uint64_t activation_bytes(int64_t m, int64_t k, const ActivationOptions&) { return kquant_activation_bytes(m, k); }

template <void (*Quantize)(const float*, int64_t, int64_t, int64_t, const Int8Activations&)>
void prepare(const float* x, int64_t m, int64_t k, const ActivationOptions&, int64_t r_begin, int64_t r_end,
             std::byte* out) {
  const KquantActivations a = kquant_activations_in(out, m, k);
  Quantize(x, k, r_begin, r_end, a.codes);
  const int64_t groups = a.codes.groups;
  auto* neg_half_sums = const_cast<int32_t*>(a.neg_half_sums);
  auto* scaled_sums = const_cast<float*>(a.scaled_sums);
  auto* tile_scales = const_cast<float*>(a.tile_scales);
  auto* tile_scaled_sums = const_cast<float*>(a.tile_scaled_sums);
  for (int64_t r = r_begin; r < r_end; ++r)
    for (int64_t g = 0; g < groups; ++g) {
      const int8_t* q = a.codes.q + r * groups * kKquantGroup + g * kKquantGroup;
      int32_t lo = 0, hi = 0;
      for (int64_t i = 0; i < 16; ++i) {
        lo += q[i];
        hi += q[16 + i];
      }
      neg_half_sums[(r * groups + g) * 2] = -lo;
      neg_half_sums[(r * groups + g) * 2 + 1] = -hi;
      scaled_sums[r * groups + g] = a.codes.scales[r * groups + g] * static_cast<float>(lo + hi);
      const int64_t tiled = (r / kKquantTokenTile * groups + g) * kKquantTokenTile + r % kKquantTokenTile;
      tile_scales[tiled] = a.codes.scales[r * groups + g];
      tile_scaled_sums[tiled] = scaled_sums[r * groups + g];
    }
}

}  // namespace

const ActivationCodec kKquantVnniActivations{"int8 groups with sums (AVX-512)", activation_bytes,
                                             prepare<kernels::quantize_activations_avx512>};
const ActivationCodec kKquantAvx2Activations{"int8 groups with sums (AVX2)", activation_bytes,
                                             prepare<kernels::quantize_activations_avx2>};

}  // namespace ds
