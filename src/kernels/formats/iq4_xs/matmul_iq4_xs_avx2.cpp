// IQ4_XS panels on AVX2 (driver: kquant_matmul_avx2.h; arithmetic: iq4_xs.h). The table's signed
// values are looked up with `vpshufb` and multiplied through `vpsignb` (|value| × ±x), so the dots
// need no offset: the same integers as the AVX-512 kernel's biased codes minus 128 · Σ xq.
#include "kernels/formats/iq4_xs/iq4_xs.h"
#include "kernels/formats/kquant/kquant_matmul_avx2.h"

namespace ds::kernels {
namespace {

struct Iq4XsPolicy {
  static constexpr int kPairSums = 1;  // |values| ≤ 127: one pair sum reaches 2 · 127 · 127
  static constexpr int64_t kCodeBytes = kNibbleBytes, kSideBytes = 16 * 136 - kCodeBytes;
  struct Scales {
    __m256 step[kGroupsPerSuperblock];  // d · (ls_j − 32) of 8 rows (exact in fp32)
  };
  static void load_scales(const std::byte* side, int h, Scales& s) {
    const __m256 d = kquant_fp16_half(side, h);
    const __m256i high = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(side + 32 + 16 * h)));
    const __m256i low4 = _mm256_set1_epi32(15), low2 = _mm256_set1_epi32(3), bias = _mm256_set1_epi32(32);
    for (int j = 0; j < kGroupsPerSuperblock; ++j) {
      __m256i low = kquant_u8_half(side + 64 + 16 * (j / 2), h);
      if (j % 2) low = _mm256_srli_epi32(low, 4);
      const __m256i high_bits = _mm256_and_si256(_mm256_srlv_epi32(high, _mm256_set1_epi32(2 * j)), low2);
      const __m256i ls = _mm256_or_si256(_mm256_and_si256(low, low4), _mm256_slli_epi32(high_bits, 4));
      const __m256i scale = _mm256_sub_epi32(ls, bias);
      s.step[j] = _mm256_mul_ps(d, _mm256_cvtepi32_ps(scale));
    }
  }
  static void codes(const std::byte* codes, int64_t j, int v, int h, __m256i& lo, __m256i& hi) {
    kquant_nibbles_avx2(codes, j, v, h, lo, hi);
    const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4Values)));
    lo = _mm256_shuffle_epi8(table, lo);
    hi = _mm256_shuffle_epi8(table, hi);
  }
  static __m256i pairs(__m256i values, __m256i x) {
    return _mm256_maddubs_epi16(_mm256_abs_epi8(values), _mm256_sign_epi8(x, values));
  }
  static __m256i start(const int32_t*) { return _mm256_setzero_si256(); }
  static __m256 finish(__m256 acc, __m256i lo, __m256i hi, const Scales& s, int64_t j, float sx, float) {
    const __m256 dot = _mm256_cvtepi32_ps(_mm256_add_epi32(lo, hi));
    return _mm256_fmadd_ps(dot, _mm256_mul_ps(s.step[j], _mm256_set1_ps(sx)), acc);
  }
};

}  // namespace

void matmul_iq4_xs_avx2(const std::byte* activations, int64_t m, const ActivationOptions& options, const TensorView& w,
                        int64_t panel_begin, int64_t panel_end, float* y) {
  matmul_kquant_avx2<Iq4XsPolicy>(activations, m, options, w, panel_begin, panel_end, y);
}

}  // namespace ds::kernels
