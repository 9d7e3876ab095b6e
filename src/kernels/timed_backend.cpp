#include "kernels/timed_backend.h"

#include "kernels/formats/weight_format.h"
#include "util/status.h"

namespace ds {

namespace {

std::string matmul_name(const TensorView& w) {
  return str_cat("matmul ", format_of(w).name(), w.activation_planes == 2 ? ", 16-bit activations" : "");
}

}  // namespace

void TimedBackend::record(const std::string& op, double seconds) {
  OpTime& time = phase_->ops[op];
  time.seconds += seconds;
  ++time.calls;
}

void TimedBackend::matmul(const float* x, int64_t m, const TensorView& w, float* y, bool round_input_bf16) {
  const double seconds = time([&] { inner_.matmul(x, m, w, y, round_input_bf16); });
  record(matmul_name(w), seconds);
}

void TimedBackend::matmuls(const float* x, int64_t m, std::span<const MatmulOutput> outputs, bool round_input_bf16) {
  const double seconds = time([&] { inner_.matmuls(x, m, outputs, round_input_bf16); });
  if (!outputs.empty()) record(matmul_name(*outputs[0].w), seconds);
}

void TimedBackend::embedding(const int32_t* ids, int64_t n, const TensorView& table, float* out) {
  timed("embedding", [&] { inner_.embedding(ids, n, table, out); });
}
void TimedBackend::rms_norm(const float* x, int64_t rows, int64_t dim, const TensorView& w, float eps, float* out) {
  timed("rms_norm", [&] { inner_.rms_norm(x, rows, dim, w, eps, out); });
}
void TimedBackend::rms_norm_gated(const float* x, const float* z, int64_t rows, int64_t dim, const TensorView& w,
                                  float eps, float* out) {
  timed("rms_norm_gated", [&] { inner_.rms_norm_gated(x, z, rows, dim, w, eps, out); });
}
void TimedBackend::silu_mul(const float* gate, const float* up, int64_t n, float* out) {
  timed("silu_mul", [&] { inner_.silu_mul(gate, up, n, out); });
}
void TimedBackend::sigmoid_gate(float* x, const float* gate, int64_t n) {
  timed("sigmoid_gate", [&] { inner_.sigmoid_gate(x, gate, n); });
}
void TimedBackend::add(float* x, const float* y, int64_t n) {
  timed("add", [&] { inner_.add(x, y, n); });
}
void TimedBackend::deltanet_gates(const float* a, const float* b, int64_t n, int64_t heads, const TensorView& A_log,
                                  const TensorView& dt_bias, float* g, float* beta) {
  timed("deltanet_gates", [&] { inner_.deltanet_gates(a, b, n, heads, A_log, dt_bias, g, beta); });
}
void TimedBackend::kv_write(const float* k, const float* v, int64_t n, int64_t start_pos, const int32_t* block_table,
                            const KvLayerView& kv) {
  timed("kv_write", [&] { inner_.kv_write(k, v, n, start_pos, block_table, kv); });
}
void TimedBackend::rope(float* x, int64_t tokens, int64_t heads, int64_t head_dim, const RopeAngles& angles) {
  timed("rope", [&] { inner_.rope(x, tokens, heads, head_dim, angles); });
}
void TimedBackend::causal_conv1d_silu(const float* x, int64_t n, int64_t channels, const float* taps, int64_t kernel,
                                      const float* state_in, float* state_out, float* out) {
  timed("causal_conv1d_silu", [&] { inner_.causal_conv1d_silu(x, n, channels, taps, kernel, state_in, state_out, out); });
}
void TimedBackend::gated_delta_rule_chunked(const float* q, const float* k, const float* v, int64_t qkv_stride,
                                            const float* g, const float* beta, int64_t n, const DeltaNetShape& shape,
                                            float* state, float* out) {
  timed("gated_delta_rule_chunked", [&] { inner_.gated_delta_rule_chunked(q, k, v, qkv_stride, g, beta, n, shape, state, out); });
}
void TimedBackend::gated_delta_rule_recurrent(const float* q, const float* k, const float* v, int64_t qkv_stride,
                                              const float* g, const float* beta, int64_t n, const DeltaNetShape& shape,
                                              const float* state_in, float* state_out, float* out) {
  timed("gated_delta_rule_recurrent",
        [&] { inner_.gated_delta_rule_recurrent(q, k, v, qkv_stride, g, beta, n, shape, state_in, state_out, out); });
}
void TimedBackend::copy(void* dst, const void* src, uint64_t bytes) {
  timed("copy", [&] { inner_.copy(dst, src, bytes); });
}
void TimedBackend::attention(const float* q, int64_t n, int64_t start_pos, int64_t num_heads, const int32_t* block_table,
                             const KvLayerView& kv, float scale, float* out) {
  timed("attention", [&] { inner_.attention(q, n, start_pos, num_heads, block_table, kv, scale, out); });
}
void TimedBackend::layer_norm(const float* x, int64_t rows, int64_t dim, const TensorView& w, const TensorView& b,
                              float eps, float* out) {
  timed("layer_norm", [&] { inner_.layer_norm(x, rows, dim, w, b, eps, out); });
}
void TimedBackend::add_bias(float* x, int64_t rows, int64_t dim, const TensorView& bias) {
  timed("add_bias", [&] { inner_.add_bias(x, rows, dim, bias); });
}
void TimedBackend::gelu(float* x, int64_t n, Gelu kind) {
  timed("gelu", [&] { inner_.gelu(x, n, kind); });
}
void TimedBackend::attention_bidirectional(const float* q, const float* k, const float* v, int64_t n, int64_t num_heads,
                                           int64_t head_dim, float scale, float* out, bool round_input_bf16) {
  timed("attention_bidirectional",
        [&] { inner_.attention_bidirectional(q, k, v, n, num_heads, head_dim, scale, out, round_input_bf16); });
}

}  // namespace ds
