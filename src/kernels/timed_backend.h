// TimedBackend: a Backend that runs another and adds up the wall time of each op, per phase the
// caller names (e.g. "decode", "verify"), so a benchmark can say where a step's time goes. Matmuls
// are kept apart by weight format and activation width ("matmul int8 panels, 16-bit activations"); a
// group sharing its input (matmuls) counts under its first weight's.
// Not for serving: each op reads the clock twice.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "kernels/backend.h"

namespace ds {

class TimedBackend final : public Backend {
 public:
  struct OpTime {
    double seconds = 0;
    int64_t calls = 0;
  };
  struct Phase {
    int64_t steps = 0;  // begin_step calls: what per-step figures divide by
    std::map<std::string, OpTime> ops;
  };

  explicit TimedBackend(Backend& inner) : inner_(inner) {}

  // One step of `phase` starts: the ops from now on count under it. Not thread-safe: the caller's
  // ops run on one thread at a time (the bench's, then the engine's).
  void begin_step(const std::string& phase) {
    phase_ = &phases_[phase];
    ++phase_->steps;
  }
  const std::map<std::string, Phase>& phases() const { return phases_; }

  const char* name() const override { return inner_.name(); }
  void matmul(const float* x, int64_t m, const TensorView& w, float* y, bool round_input_bf16) override;
  void matmuls(const float* x, int64_t m, std::span<const MatmulOutput> outputs, bool round_input_bf16) override;
  WeightFormatId preferred_format(const TensorView& w, bool round_input_bf16) const override {
    return inner_.preferred_format(w, round_input_bf16);
  }
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
  void copy(void* dst, const void* src, uint64_t bytes) override;
  // Not an op of the model: passed on untimed.
  void parallel_for(int64_t count, FunctionRef<void(int64_t)> task) override { inner_.parallel_for(count, task); }
  void attention(const float* q, int64_t n, int64_t start_pos, int64_t num_heads, const int32_t* block_table,
                 const KvLayerView& kv, float scale, float* out) override;
  void layer_norm(const float* x, int64_t rows, int64_t dim, const TensorView& w, const TensorView& b, float eps,
                  float* out) override;
  void add_bias(float* x, int64_t rows, int64_t dim, const TensorView& bias) override;
  void gelu(float* x, int64_t n, Gelu kind) override;
  void attention_bidirectional(const float* q, const float* k, const float* v, int64_t n, int64_t num_heads,
                               int64_t head_dim, float scale, float* out, bool round_input_bf16) override;

 private:
  // The seconds op() takes: only the op, not the bookkeeping (the name, the map) that follows.
  template <typename Op>
  static double time(Op&& op) {
    const auto start = std::chrono::steady_clock::now();
    op();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  template <typename Op>
  void timed(const char* name, Op&& op) {
    record(name, time(op));
  }
  void record(const std::string& op, double seconds);

  Backend& inner_;
  std::map<std::string, Phase> phases_;
  Phase* phase_ = &phases_["other"];
};

}  // namespace ds
