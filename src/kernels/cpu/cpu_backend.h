// CpuBackend: the fast CPU implementation of the op interface — AVX-512 (BF16) or AVX2 kernels
// chosen at run time, a persistent thread pool, and the scalar reference for ops not vectorised yet
// (each fast kernel is tested against RefBackend, which stays as the oracle).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/isa.h"
#include "kernels/cpu/portable_kernels.h"
#include "kernels/delta_scratch.h"
#include "kernels/formats/weight_format.h"
#include "kernels/ref/ref_backend.h"
#include "util/function_ref.h"
#include "util/thread_pool.h"

namespace ds {

class CpuBackend final : public Backend {
 public:
  CpuBackend(Isa isa, int threads);
  const char* name() const override { return name_.c_str(); }
  Isa isa() const { return isa_; }
  int threads() const { return pool_.size(); }
  ThreadPool& pool() { return pool_; }

  void matmul(const float* x, int64_t m, const TensorView& w, float* y, bool round_input_bf16) override;
  void matmuls(const float* x, int64_t m, std::span<const MatmulOutput> outputs, bool round_input_bf16) override;
  WeightFormatId preferred_format(const TensorView& w, bool round_input_bf16) const override;
  void embedding(const int32_t* ids, int64_t n, const TensorView& table, float* out) override;
  void rms_norm(const float* x, int64_t rows, int64_t dim, const TensorView& w, float eps, float* out) override;
  void rms_norm_gated(const float* x, const float* z, int64_t rows, int64_t dim, const TensorView& w, float eps,
                      float* out) override;
  void silu_mul(const float* gate, const float* up, int64_t n, float* out) override;
  void sigmoid_gate(float* x, const float* gate, int64_t n) override;
  void add(float* x, const float* y, int64_t n) override;
  void deltanet_gates(const float* a, const float* b, int64_t n, int64_t heads, const TensorView& A_log,
                      const TensorView& dt_bias, float* g, float* beta) override;
  void kv_write(const float* k, const float* v, int64_t n, int64_t start_pos, const int32_t* block_table,
                const KvLayerView& kv) override;
  void rope(float* x, int64_t tokens, int64_t heads, int64_t head_dim, const RopeAngles& angles) override;
  void causal_conv1d_silu(const float* x, int64_t n, int64_t channels, const float* taps, int64_t kernel,
                          const float* state_in, float* state_out, float* out) override;
  void gated_delta_rule_chunked(const float* q, const float* k, const float* v, int64_t qkv_stride, const float* g,
                                const float* beta, int64_t n, const DeltaNetShape& shape, float* state,
                                float* out) override;
  void gated_delta_rule_recurrent(const float* q, const float* k, const float* v, int64_t qkv_stride, const float* g,
                                  const float* beta, int64_t n, const DeltaNetShape& shape, const float* state_in,
                                  float* state_out, float* out) override;
  void attention(const float* q, int64_t n, int64_t start_pos, int64_t num_heads, const int32_t* block_table,
                 const KvLayerView& kv, float scale, float* out) override;
  void copy(void* dst, const void* src, uint64_t bytes) override;
  void parallel_for(int64_t count, FunctionRef<void(int64_t)> task) override;
  // The vision tower's ops (vision_ops.inc): rows, elements or (head, query tile) pairs over the threads.
  void layer_norm(const float* x, int64_t rows, int64_t dim, const TensorView& w, const TensorView& b, float eps,
                  float* out) override;
  void add_bias(float* x, int64_t rows, int64_t dim, const TensorView& bias) override;
  void gelu(float* x, int64_t n, Gelu kind) override;
  void attention_bidirectional(const float* q, const float* k, const float* v, int64_t n, int64_t num_heads,
                               int64_t head_dim, float scale, float* out, bool round_input_bf16) override;

 private:
  // Matmuls whose kernels read the same prepared activations: prepared once (rows split over the
  // threads), then every output's kernel over one contiguous range of all their panels per thread.
  void run_fast_matmuls(const float* x, int64_t m, const ActivationOptions& options, const ActivationCodec& codec,
                        std::span<const MatmulOutput> outputs);
  // Splits [0, count) into per-thread ranges (multiples of `align`) when `work` floats justify a
  // hand-off; fn(begin, end, that thread's scratch buffer).
  void run_ranges(int64_t count, int64_t work, int64_t align,
                  FunctionRef<void(int64_t, int64_t, std::vector<float>&)> fn);

  Isa isa_;
  ThreadPool pool_;
  RefBackend ref_;
  std::string name_;
  const kernels::PortableKernels* portable_;  // this ISA's build of the portable kernels (null: scalar)
  // A matmul call's prepared activations, 64-byte aligned as codecs are promised (grows to the
  // largest call, then never allocates again).
  std::unique_ptr<std::byte, decltype(&std::free)> activations_{nullptr, &std::free};
  uint64_t activation_bytes_ = 0;
  struct MatmulPart {
    PanelKernel kernel;
    int64_t panels;
  };
  std::vector<MatmulPart> parts_;  // per output of a call: its format's kernel and panel count
  std::vector<DeltaScratch> delta_scratch_;          // one per thread
  std::vector<std::vector<float>> thread_buffers_;   // one per thread: attention scores, conv history, norm weights
};

}  // namespace ds
