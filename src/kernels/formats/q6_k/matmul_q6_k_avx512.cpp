// Q6_K panels on AVX-512 VNNI (driver: kquant_matmul_avx512.h; policy: q6_k_policy.h).
#include "kernels/formats/q6_k/q6_k_policy.h"

namespace ds::kernels {

void matmul_q6_k_avx512(const std::byte* activations, int64_t m, const ActivationOptions& options, const TensorView& w,
                        int64_t panel_begin, int64_t panel_end, float* y) {
  matmul_kquant_avx512<Q6KPolicy>(activations, m, options, w, panel_begin, panel_end, y);
}

}  // namespace ds::kernels
