// IQ4_XS panels on AVX-512 VNNI (driver: kquant_matmul_avx512.h; policy: iq4_xs_policy.h).
#include "kernels/formats/iq4_xs/iq4_xs_policy.h"

namespace ds::kernels {

void matmul_iq4_xs_avx512(const std::byte* activations, int64_t m, const ActivationOptions& options, const TensorView& w,
                          int64_t panel_begin, int64_t panel_end, float* y) {
  matmul_kquant_avx512<Iq4XsPolicy>(activations, m, options, w, panel_begin, panel_end, y);
}

}  // namespace ds::kernels
