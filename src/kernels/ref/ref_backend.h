// RefBackend: scalar reference implementation of every op — the test oracle that fast kernels
// are checked against, written for clarity and a fixed reduction order, not for speed.
#pragma once

#include "kernels/backend.h"

namespace ds {

class RefBackend final : public Backend {
 public:
  const char* name() const override { return "reference (scalar)"; }
  void matmul(const float* x, int64_t m, const TensorView& w, float* y, bool round_input_bf16) override;
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
  void layer_norm(const float* x, int64_t rows, int64_t dim, const TensorView& w, const TensorView& b, float eps,
                  float* out) override;
  void add_bias(float* x, int64_t rows, int64_t dim, const TensorView& bias) override;
  void gelu(float* x, int64_t n, Gelu kind) override;
  void attention_bidirectional(const float* q, const float* k, const float* v, int64_t n, int64_t num_heads,
                               int64_t head_dim, float scale, float* out, bool round_input_bf16) override;
};

}  // namespace ds
