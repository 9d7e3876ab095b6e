// Q4_K panels on AVX-512 VNNI (the shared driver: kquant_matmul_avx512.h; the arithmetic:
// ScaleMinType::accumulate).
#include "kernels/formats/kquant/kquant_matmul_avx512.h"
#include "kernels/formats/q4_k/q4_k.h"
#include "kernels/formats/q4_k/scale_min_avx512.h"

namespace ds::kernels {
namespace {

struct Q4KPolicy : ScaleMinAvx512 {
  static constexpr int64_t kCodeBytes = kNibbleBytes, kSideBytes = 16 * 144 - kCodeBytes;
  static void load_scales(const std::byte* side, Scales& s) { load_scale_min(side, s); }
  static void codes(const std::byte* codes, int64_t j, int v, __m512i& lo, __m512i& hi) { kquant_nibbles(codes, j, v, lo, hi); }
};

}  // namespace

void matmul_q4_k_avx512(const std::byte* activations, int64_t m, const ActivationOptions& options, const TensorView& w,
                        int64_t panel_begin, int64_t panel_end, float* y) {
  matmul_kquant_avx512<Q4KPolicy>(activations, m, options, w, panel_begin, panel_end, y);
}

}  // namespace ds::kernels
