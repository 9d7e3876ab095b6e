// Q5_K panels on AVX2: Q4_K's with the fifth code bit, each half's 32 mask bits spread to bytes.
#include "kernels/formats/kquant/kquant_matmul_avx2.h"
#include "kernels/formats/q4_k/scale_min_avx2.h"
#include "kernels/formats/q5_k/q5_k.h"

namespace ds::kernels {
namespace {

// 16 where bit i of `bits` is set, in byte i (32 bytes).
__m256i fifth_bits(uint32_t bits) {
  const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int32_t>(bits)),
                                             _mm256_setr_epi64x(0, 0x0101010101010101, 0x0202020202020202, 0x0303030303030303));
  const __m256i select = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, select), select), _mm256_set1_epi8(16));
}

struct Q5KPolicy : ScaleMinAvx2 {
  static constexpr int64_t kCodeBytes = kNibbleBytes + 512, kSideBytes = 16 * 176 - kCodeBytes;
  static void load_scales(const std::byte* side, int h, Scales& s) { load_scale_min(side, h, s); }
  static void codes(const std::byte* codes, int64_t j, int v, int h, __m256i& lo, __m256i& hi) {
    kquant_nibbles_avx2(codes, j, v, h, lo, hi);
    const std::byte* masks = codes + kNibbleBytes + 64 * j;  // mask u of group j at 8·u; half h: its bits 32h..
    uint32_t mask_lo, mask_hi;
    std::memcpy(&mask_lo, masks + 8 * v + 4 * h, 4);
    std::memcpy(&mask_hi, masks + 8 * (v + 4) + 4 * h, 4);
    lo = _mm256_add_epi8(lo, fifth_bits(mask_lo));
    hi = _mm256_add_epi8(hi, fifth_bits(mask_hi));
  }
};

}  // namespace

void matmul_q5_k_avx2(const std::byte* activations, int64_t m, const ActivationOptions& options, const TensorView& w,
                      int64_t panel_begin, int64_t panel_end, float* y) {
  matmul_kquant_avx2<Q5KPolicy>(activations, m, options, w, panel_begin, panel_end, y);
}

}  // namespace ds::kernels
