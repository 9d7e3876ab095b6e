// Backend: the op interface the model's forward is written against (no intrinsics in model code).
// Activations are fp32 row-major; weights are TensorViews of the mmapped checkpoint or of packed
// copies, in any format of kernels/formats/.
// ref/ holds the scalar oracle; fast backends (AVX-512, AVX2, CUDA) implement the same ops.
#pragma once

#include <cstdint>
#include <span>

#include "io/tensor_view.h"
#include "util/function_ref.h"

namespace ds {

// Element type of the KV cache. bf16 (fast mode): each value rounded to nearest even from fp32 as
// torch's .to(bfloat16) does, stored as its upper 16 bits (uint16_t); half the bytes, twice the
// cached tokens. Attention widens V exactly; scores against bf16 keys use bf16 queries (below).
enum class KvDtype : uint8_t { fp32, bf16 };
inline const char* kv_dtype_name(KvDtype dtype) { return dtype == KvDtype::bf16 ? "bf16" : "fp32"; }
inline int64_t kv_dtype_bytes(KvDtype dtype) { return dtype == KvDtype::bf16 ? 2 : 4; }
// Bumped whenever the arrangement of KV elements in a block changes: cached blocks written by
// another arrangement (prefix-cache files) must never be read as this one.
inline constexpr int64_t kKvLayoutVersion = 2;

// One full-attention layer's KV in the paged pool. In block b, for slot s (token), kv head h and
// dim d:
//   v[b·block_stride + (s·num_kv_heads + h)·head_dim + d]    — a token's V row is contiguous;
//   fp32 k[b·block_stride + (h·head_dim + d)·block_size + s] — keys innermost: one dim of a block's
//                                                              consecutive keys is contiguous,
// so a score kernel holds keys in vector lanes and needs no horizontal sums (attention.inc);
//   bf16 k[b·block_stride + h·head_dim·block_size + (d − d mod 2)·block_size + 2·s + d mod 2]
//                                                            — the same with dims in pairs: a key's
// dims (2j, 2j + 1) are one 32-bit word, and word j of a block's consecutive keys is contiguous, the
// operand `vdpbf16ps` multiplies with a broadcast query pair (one key per lane). head_dim is even.
// Elements are `dtype`: float for fp32, uint16_t for bf16; the accessors take that type.
struct KvLayerView {
  void* k = nullptr;
  void* v = nullptr;
  KvDtype dtype = KvDtype::fp32;
  int64_t block_size = 0;    // tokens per block
  int64_t block_stride = 0;  // elements per block of one layer's k (or v)
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;

  // Key `slot` of `block` for kv head h: its dim d is at key_column(...)[key_dim_offset<T>(d)].
  template <typename T>
  T* key_column(int64_t block, int64_t slot, int64_t h) const {
    return static_cast<T*>(k) + block * block_stride + h * head_dim * block_size + slot * key_lanes<T>();
  }
  template <typename T>
  int64_t key_dim_offset(int64_t d) const {
    return key_lanes<T>() == 2 ? (d - d % 2) * block_size + d % 2 : d * block_size;
  }
  template <typename T>
  T* value_row(int64_t block, int64_t slot, int64_t h) const {
    return static_cast<T*>(v) + block * block_stride + (slot * num_kv_heads + h) * head_dim;
  }

 private:
  // Elements of one key side by side: a dim pair for bf16, one dim for fp32.
  template <typename T>
  static constexpr int64_t key_lanes() {
    return sizeof(T) == 2 ? 2 : 1;
  }
};

// Rotary tables of one call: cos/sin [tokens, rotary_dim / 2] (one angle per frequency slot,
// already interleaved across the T/H/W position rows as mRoPE prescribes).
struct RopeAngles {
  const float* cos = nullptr;
  const float* sin = nullptr;
  int64_t half_dim = 0;  // rotary_dim / 2
};

// Per-call Gated DeltaNet shapes. Value head h reads key head h / (num_v_heads / num_k_heads).
struct DeltaNetShape {
  int64_t num_k_heads, num_v_heads, k_dim, v_dim;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;

  // y[m, n] = Σ_k x[m, k] · w[n, k]  (w [n, k] as stored, PyTorch Linear layout). With
  // round_input_bf16 each x element is rounded to bf16 first (fast mode); accumulation is fp32.
  virtual void matmul(const float* x, int64_t m, const TensorView& w, float* y, bool round_input_bf16) = 0;
  // Several matmuls that share their input (a layer's projections): outputs[i].y = x · outputs[i].wᵀ,
  // each bit-identical to what matmul gives it. Backends prepare the input once and hand all the
  // weights' rows to their threads in one pass.
  struct MatmulOutput {
    const TensorView* w;
    float* y;  // [m, w->shape[0]]
  };
  virtual void matmuls(const float* x, int64_t m, std::span<const MatmulOutput> outputs, bool round_input_bf16) {
    for (const MatmulOutput& out : outputs) matmul(x, m, *out.w, out.y, round_input_bf16);
  }
  // The format this backend runs the weight `w` fastest in among those that keep its values (the
  // loader repacks into it; kernels/formats/); w's own format when none is better. Every backend
  // still runs any format (the reference reads it element by element).
  virtual WeightFormatId preferred_format(const TensorView& w, bool round_input_bf16) const {
    (void)round_input_bf16;
    return w.format;
  }
  // out[i, :] = table[ids[i], :], as its format's values (a GGUF table stays in its block type).
  virtual void embedding(const int32_t* ids, int64_t n, const TensorView& table, float* out) = 0;
  // Zero-centred RMSNorm (Qwen3_5RMSNorm): out = x · rsqrt(mean(x²) + eps) · (1 + w), per row of `dim`.
  virtual void rms_norm(const float* x, int64_t rows, int64_t dim, const TensorView& w, float eps, float* out) = 0;
  // Qwen3_5RMSNormGated: out = (x · rsqrt(mean(x²) + eps)) · w · silu(z), per row of `dim` (plain w).
  virtual void rms_norm_gated(const float* x, const float* z, int64_t rows, int64_t dim, const TensorView& w, float eps,
                              float* out) = 0;
  // out[i] = silu(gate[i]) · up[i]
  virtual void silu_mul(const float* gate, const float* up, int64_t n, float* out) = 0;
  // x[i] *= sigmoid(gate[i])
  virtual void sigmoid_gate(float* x, const float* gate, int64_t n) = 0;
  // x[i] += y[i]
  virtual void add(float* x, const float* y, int64_t n) = 0;
  // DeltaNet gates (fp32): beta = sigmoid(b); g = −exp(A_log) · softplus(a + dt_bias), with
  // PyTorch's softplus (x for x > 20). a, b, g, beta [n, heads]; A_log, dt_bias [heads].
  virtual void deltanet_gates(const float* a, const float* b, int64_t n, int64_t heads, const TensorView& A_log,
                              const TensorView& dt_bias, float* g, float* beta) = 0;
  // Stores k, v [n, num_kv_heads, head_dim] at positions start_pos .. start_pos+n-1 of a sequence,
  // rounded to nearest even when the cache is bf16.
  virtual void kv_write(const float* k, const float* v, int64_t n, int64_t start_pos, const int32_t* block_table,
                        const KvLayerView& kv) = 0;
  // NeoX-style rotation of the first 2·half_dim dims of each head: x [tokens, heads, head_dim].
  virtual void rope(float* x, int64_t tokens, int64_t heads, int64_t head_dim, const RopeAngles& angles) = 0;
  // Causal depthwise conv (kernel K) over time + SiLU. x, out [n, channels]; taps [K, channels] fp32:
  // tap j of every channel in one run, tap K-1 multiplying the current input (the checkpoint's conv1d
  // [channels, 1, K] transposed once at load: conv_taps in weight_access.h); state_in [K-1, channels]:
  // the previous K-1 inputs (oldest first); state_out [K-1, channels]: the last K-1 inputs after these
  // n, written once state_in is read — the same array (in place) or another (a speculative verify
  // writes the next state beside the one it may fall back to).
  virtual void causal_conv1d_silu(const float* x, int64_t n, int64_t channels, const float* taps, int64_t kernel,
                                  const float* state_in, float* state_out, float* out) = 0;
  // Gated delta rule over n tokens of one sequence, chunked form (chunk 64, forward substitution).
  // q, k [n, num_k_heads·k_dim] raw (l2norm and the 1/sqrt(k_dim) scale are applied inside),
  // v [n, num_v_heads·v_dim], g, beta [n, num_v_heads] fp32; state [num_v_heads, k_dim, v_dim]
  // read and updated; out [n, num_v_heads·v_dim]. Rows of q, k, v are `qkv_stride` floats apart.
  virtual void gated_delta_rule_chunked(const float* q, const float* k, const float* v, int64_t qkv_stride,
                                        const float* g, const float* beta, int64_t n, const DeltaNetShape& shape,
                                        float* state, float* out) = 0;
  // The same, one token at a time (decode), from state_in to state_out [num_v_heads, k_dim, v_dim]:
  // the same array (in place) or another, as for the conv above; state_in is then left as it was.
  virtual void gated_delta_rule_recurrent(const float* q, const float* k, const float* v, int64_t qkv_stride,
                                          const float* g, const float* beta, int64_t n, const DeltaNetShape& shape,
                                          const float* state_in, float* state_out, float* out) = 0;
  // dst[0, bytes) = src[0, bytes): the cache managers' copies — DeltaNet state into and out of
  // prefix-cache snapshots (tens to hundreds of MiB per second of serving), KV blocks into and out
  // of them — so a backend moves cache memory where it lives, with its own threads.
  virtual void copy(void* dst, const void* src, uint64_t bytes) = 0;
  // task(i) for every i in [0, count), each once, in no particular order, on the backend's threads;
  // returns when all are done. Host work between steps that would leave those threads idle: the
  // engine's sampling of a batch (each request's sampler its own). By default, in turn.
  virtual void parallel_for(int64_t count, FunctionRef<void(int64_t)> task) {
    for (int64_t i = 0; i < count; ++i) task(i);
  }
  // Causal softmax attention of n new query tokens (absolute positions start_pos .. start_pos+n-1)
  // over the cached keys 0 .. start_pos+n-1 of one sequence. q, out [n, num_heads, head_dim];
  // query head h uses kv head h / (num_heads / num_kv_heads). fp32 cache: scores and the weighted
  // sum of V in fp32. bf16 cache (fast mode): q is rounded to bf16 and a score sums the exact
  // products of each dim pair, odd dim first (what `vdpbf16ps` computes); V is widened exactly.
  virtual void attention(const float* q, int64_t n, int64_t start_pos, int64_t num_heads, const int32_t* block_table,
                         const KvLayerView& kv, float scale, float* out) = 0;

  // The vision tower's ops (src/vision/; HF Qwen3_5VisionModel). All fp32.
  // LayerNorm with biased variance: out = (x − mean) / sqrt(var + eps) · w + b, per row of `dim`.
  virtual void layer_norm(const float* x, int64_t rows, int64_t dim, const TensorView& w, const TensorView& b,
                          float eps, float* out) = 0;
  // x[r, i] += bias[i] for every row r of `dim` (a Linear's bias).
  virtual void add_bias(float* x, int64_t rows, int64_t dim, const TensorView& bias) = 0;
  // In place: tanh = ½x(1 + tanh(√(2/π)(x + 0.044715x³))) (gelu_pytorch_tanh), erf = ½x(1 + erf(x/√2)) (nn.GELU()).
  enum class Gelu : uint8_t { tanh, erf };
  virtual void gelu(float* x, int64_t n, Gelu kind) = 0;
  // Softmax attention without a mask over one segment of n tokens (every query sees every key:
  // the patches of one image). q, k, v, out [n, num_heads, head_dim]; scores q·k·scale, softmax
  // fp32. Scores are formed one query row at a time: an n × n matrix never exists.
  // round_input_bf16 (fast mode, as the tower's matmuls): q, k and v are rounded to bf16; a score
  // sums the exact products of each dim pair, odd dim first (the bf16 cache's scores, above); each
  // softmax weight e^(s − max) is rounded to bf16 and the weighted sum of V adds the exact products
  // of each key pair, later key first (`vdpbf16ps`), divided by the sum of the rounded weights.
  // A backend without bf16 dot products may compute the fp32 form instead (the AVX2 build does).
  virtual void attention_bidirectional(const float* q, const float* k, const float* v, int64_t n, int64_t num_heads,
                                       int64_t head_dim, float scale, float* out, bool round_input_bf16) = 0;
};

}  // namespace ds
