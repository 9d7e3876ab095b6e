// Row-wise and element-wise ops (elementwise.inc) built for AVX2 and AVX-512 without FP contraction:
// bit-identical to the reference; each call covers a range of rows, elements or tokens so the CPU
// backend can split the work across threads.
#pragma once

#include "io/tensor_view.h"
#include "kernels/backend.h"

namespace ds::kernels {

#define DS_ELEMENTWISE_KERNELS(isa)                                                                                 \
  void rms_norm_##isa(const float* x, int64_t dim, const TensorView& w, float eps, float* out, int64_t r_begin,     \
                      int64_t r_end, float* weight_buffer);                                                        \
  void rms_norm_gated_##isa(const float* x, const float* z, int64_t dim, const TensorView& w, float eps, float* out, \
                            int64_t r_begin, int64_t r_end, float* weight_buffer);                                 \
  void silu_mul_##isa(const float* gate, const float* up, float* out, int64_t begin, int64_t end);                 \
  void sigmoid_gate_##isa(float* x, const float* gate, int64_t begin, int64_t end);                                \
  void add_##isa(float* x, const float* y, int64_t begin, int64_t end);                                            \
  void rope_##isa(float* x, int64_t heads, int64_t head_dim, const RopeAngles& angles, int64_t t_begin, int64_t t_end);
DS_ELEMENTWISE_KERNELS(avx512)
DS_ELEMENTWISE_KERNELS(avx2)
#undef DS_ELEMENTWISE_KERNELS

}  // namespace ds::kernels
