// Token-mixer kernels (gated delta rule, causal conv, paged attention) built for AVX2 and AVX-512:
// the reference loops (../*.inc) compiled for each ISA without FP contraction, so they vectorise
// and stay bit-identical to the reference. Each call covers a range of heads or channels — the CPU
// backend splits those ranges across threads.
#pragma once

#include "io/tensor_view.h"
#include "kernels/delta_scratch.h"

namespace ds::kernels {

#define DS_DELTA_KERNEL(name)                                                                                     \
  void name(const float* q, const float* k, const float* v, int64_t qkv_stride, const float* g, const float* beta, \
            int64_t n, const DeltaNetShape& s, float* state, float* out, int64_t h_begin, int64_t h_end,           \
            DeltaScratch& scratch)
#define DS_CONV_KERNEL(name)                                                                                    \
  void name(const float* x, int64_t n, int64_t channels, const TensorView& w, float* state, float* out,         \
            int64_t c_begin, int64_t c_end, float* taps, float* history)
#define DS_ATTENTION_KERNEL(name)                                                                                  \
  void name(const float* q, int64_t n, int64_t start_pos, int64_t num_heads, const int32_t* block_table,          \
            const KvLayerView& kv, float scale, float* out, int64_t h_begin, int64_t h_end, float* scores)
DS_DELTA_KERNEL(delta_recurrent_avx512);
DS_DELTA_KERNEL(delta_chunked_avx512);
DS_CONV_KERNEL(conv_avx512);
DS_ATTENTION_KERNEL(attention_avx512);
DS_DELTA_KERNEL(delta_recurrent_avx2);
DS_DELTA_KERNEL(delta_chunked_avx2);
DS_CONV_KERNEL(conv_avx2);
DS_ATTENTION_KERNEL(attention_avx2);

}  // namespace ds::kernels
