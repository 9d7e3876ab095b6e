// Q6_K panels on AMX-INT8 (driver: kquant_matmul_amx.h; policy: q6_k_policy.h); batches below
// kKquantAmxMinTokens tokens take the VNNI kernel.
#include "kernels/formats/kquant/kquant_matmul_amx.h"
#include "kernels/formats/q6_k/q6_k_policy.h"

namespace ds::kernels {

void matmul_q6_k_amx(const std::byte* activations, int64_t m, const ActivationOptions& options, const TensorView& w,
                    int64_t panel_begin, int64_t panel_end, float* y) {
  if (m < kKquantAmxMinTokens) return matmul_q6_k_avx512(activations, m, options, w, panel_begin, panel_end, y);
  matmul_kquant_amx<Q6KPolicy>(activations, m, w, panel_begin, panel_end, y);
}

}  // namespace ds::kernels
