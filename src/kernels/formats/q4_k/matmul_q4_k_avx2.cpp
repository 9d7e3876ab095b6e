// Q4_K panels on AVX2 (driver: kquant_matmul_avx2.h; arithmetic: ScaleMinType::accumulate).
#include "kernels/formats/kquant/kquant_matmul_avx2.h"
#include "kernels/formats/q4_k/q4_k.h"
#include "kernels/formats/q4_k/scale_min_avx2.h"

namespace ds::kernels {
namespace {

struct Q4KPolicy : ScaleMinAvx2 {
  static constexpr int64_t kCodeBytes = kNibbleBytes, kSideBytes = 16 * 144 - kCodeBytes;
  static void load_scales(const std::byte* side, int h, Scales& s) { load_scale_min(side, h, s); }
  static void codes(const std::byte* codes, int64_t j, int v, int h, __m256i& lo, __m256i& hi) {
    kquant_nibbles_avx2(codes, j, v, h, lo, hi);
  }
};

}  // namespace

void matmul_q4_k_avx2(const std::byte* activations, int64_t m, const ActivationOptions& options, const TensorView& w,
                      int64_t panel_begin, int64_t panel_end, float* y) {
  matmul_kquant_avx2<Q4KPolicy>(activations, m, options, w, panel_begin, panel_end, y);
}

}  // namespace ds::kernels
