// Q6_K panels on AVX2 (driver: kquant_matmul_avx2.h; arithmetic: q6_k.h), as the AVX-512 kernel.
#include "kernels/formats/kquant/kquant_matmul_avx2.h"
#include "kernels/formats/q6_k/q6_k.h"

namespace ds::kernels {
namespace {

struct Q6KPolicy : KquantUnsignedCodesAvx2 {
  static constexpr int kPairSums = 2;  // codes ≤ 63: two pair sums ≤ 2 · 2 · 63 · 127 = 32,004 fit int16
  static constexpr int64_t kCodeBytes = kNibbleBytes + 1024, kSideBytes = 16 * 210 - kCodeBytes;
  struct Scales {
    __m256 step[16];  // d · sc of each 16-input sub-block, 8 rows (exact in fp32)
  };
  static void load_scales(const std::byte* side, int h, Scales& s) {
    const __m256 d = kquant_fp16_half(side + 256, h);
    for (int sub = 0; sub < 16; ++sub)
      s.step[sub] = _mm256_mul_ps(d, _mm256_cvtepi32_ps(kquant_i8_half(side + 16 * sub, h)));
  }
  static __m256i with_high(__m256i low, __m256i plane, int v) {
    const __m256i shifted = v == 0 ? _mm256_slli_epi16(plane, 4)
                            : v == 1 ? _mm256_slli_epi16(plane, 2)
                            : v == 2 ? plane
                                     : _mm256_srli_epi16(plane, 2);
    return _mm256_or_si256(low, _mm256_and_si256(shifted, _mm256_set1_epi8(0x30)));
  }
  static void codes(const std::byte* codes, int64_t j, int v, int h, __m256i& lo, __m256i& hi) {
    kquant_nibbles_avx2(codes, j, v, h, lo, hi);
    const std::byte* planes = codes + kNibbleBytes + 128 * j + 32 * h;
    lo = with_high(lo, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(planes)), v);
    hi = with_high(hi, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(planes + 64)), v);
  }
  static __m256i start(const int32_t* neg_half_sum) { return _mm256_slli_epi32(_mm256_set1_epi32(*neg_half_sum), 5); }
  static __m256 finish(__m256 acc, __m256i lo, __m256i hi, const Scales& s, int64_t j, float sx, float) {
    const __m256 t = _mm256_fmadd_ps(s.step[2 * j], _mm256_cvtepi32_ps(lo),
                                     _mm256_mul_ps(s.step[2 * j + 1], _mm256_cvtepi32_ps(hi)));
    return _mm256_fmadd_ps(t, _mm256_set1_ps(sx), acc);
  }
};

}  // namespace

void matmul_q6_k_avx2(const std::byte* activations, int64_t m, const ActivationOptions& options, const TensorView& w,
                      int64_t panel_begin, int64_t panel_end, float* y) {
  matmul_kquant_avx2<Q6KPolicy>(activations, m, options, w, panel_begin, panel_end, y);
}

}  // namespace ds::kernels
