// Reference gated delta rule (HF torch_recurrent_gated_delta_rule / torch_chunk_gated_delta_rule;
// spec §4.1 steps 7–8, §4.2): plain loops that read like the math, one head and one operation after
// another. The oracle of the tiled CPU kernel (gated_delta_rule_tiled.inc), which must compute these
// operations in this order, bit for bit (tests/kernels/gated_delta_rule_test.cpp). Every sum runs
// over its index in ascending order from +0; built with -ffp-contract=off (each a · b + c rounds twice).
// Denormal inputs and results are zero (FTZ and DAZ for the call, util/flush_denormals.h): strong
// decays otherwise put whole states into denormals, which x86 computes several times slower.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/delta_scratch.h"
#include "kernels/ref/ref_backend.h"
#include "util/flush_denormals.h"

namespace ds {
namespace {

// out = x · rsqrt(Σx² + 1e-6) · scale: HF's l2norm, eps inside the sum of squares (spec §4.1 step 7).
void l2norm_scaled(const float* x, int64_t dim, float scale, float* out) {
  float sum = 0.0f;
  for (int64_t i = 0; i < dim; ++i) sum += x[i] * x[i];
  const float inv = 1.0f / std::sqrt(sum + 1e-6f);
  for (int64_t i = 0; i < dim; ++i) out[i] = x[i] * inv * scale;
}

// Σ_i a[i] · b[i · b_stride]: with b = S + j and b_stride = v_dim, the product of a key-sized
// vector with column j of a state S [k_dim, v_dim], i.e. (Sᵀ a)[j].
float dot(const float* a, const float* b, int64_t n, int64_t b_stride = 1) {
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) sum += a[i] * b[i * b_stride];
  return sum;
}

// Where one value head finds its inputs: token t's q, k, v rows and its gate g and β.
struct HeadInputs {
  const float *q, *k, *v;  // q, k: key head h / (nV / nK); rows qkv_stride apart
  int64_t qkv_stride;
  const float *g, *beta;  // [n, nV]: column h
  int64_t num_v_heads, h;
  const float* q_row(int64_t t) const { return q + t * qkv_stride; }
  const float* k_row(int64_t t) const { return k + t * qkv_stride; }
  const float* v_row(int64_t t) const { return v + t * qkv_stride; }
  float gate(int64_t t) const { return g[t * num_v_heads + h]; }
  float beta_at(int64_t t) const { return beta[t * num_v_heads + h]; }
};

// Tokens [0, n) of one head, one at a time (torch_recurrent_gated_delta_rule). S [dk, dv];
// out: row t at out + t · out_stride.
void recurrent_head(const HeadInputs& in, int64_t n, int64_t dk, int64_t dv, float* S, float* out,
                    int64_t out_stride) {
  const float q_scale = 1.0f / std::sqrt(static_cast<float>(dk));
  std::vector<float> q(dk), k(dk), error(dv);  // error: β_t e_t
  for (int64_t t = 0; t < n; ++t) {
    l2norm_scaled(in.q_row(t), dk, q_scale, q.data());
    l2norm_scaled(in.k_row(t), dk, 1.0f, k.data());
    const float decay = std::exp(in.gate(t)), beta = in.beta_at(t);
    const float* v = in.v_row(t);
    // S' = exp(g_t) S
    for (int64_t i = 0; i < dk * dv; ++i) S[i] *= decay;
    // β_t e_t = β_t (v_t − S'ᵀ k_t)
    for (int64_t j = 0; j < dv; ++j) error[j] = (v[j] - dot(k.data(), S + j, dk, dv)) * beta;
    // S = S' + k_t (β_t e_t)ᵀ
    for (int64_t i = 0; i < dk; ++i)
      for (int64_t j = 0; j < dv; ++j) S[i * dv + j] += k[i] * error[j];
    // o_t = Sᵀ q_t, read after the update
    float* o = out + t * out_stride;
    for (int64_t j = 0; j < dv; ++j) o[j] = dot(q.data(), S + j, dk, dv);
  }
}

// One chunk of len ≤ 64 tokens of one head (torch_chunk_gated_delta_rule), from the state S [dk, dv]
// at its start, which it updates. With G_i the cumulative log-decay inside the chunk and
// decay(i, j) = exp(G_i − G_j):
//   A[i][j]  = β_i (k_i·k_j) decay(i, j)                        for j < i
//   V_new[i] = β_i (v_i − exp(G_i) Sᵀk_i) − Σ_{j<i} A[i][j] V_new[j]
//   out_i    = exp(G_i) Sᵀq_i + Σ_{j≤i} (q_i·k_j) decay(i, j) V_new[j]
//   S       ← exp(G_last) S + Σ_j k_j decay(last, j) V_new[j]ᵀ
// V_new solves (I + A) V_new = β ⊙ (V − exp(G) K S) by forward substitution. HF solves (I + A) U = βV
// and (I + A) W = β exp(G) K and forms V_new = U − W S: the same quantity, here with one right-hand
// side of dv columns and no difference of two products (docs/numerics.md). A chunk shorter than 64
// is HF's zero padding: padded rows have β = 0 and g = 0, so they change nothing.
void chunk_of_head(const HeadInputs& in, int64_t len, int64_t dk, int64_t dv, float* S, float* out,
                   int64_t out_stride) {
  const float q_scale = 1.0f / std::sqrt(static_cast<float>(dk));
  std::vector<float> Q(len * dk), K(len * dk);  // [len, dk] l2-normalised
  std::vector<float> beta(len);                 // [len]
  // The cumulative gate is kept in double: with strong decays (g ≈ −200 per token) G reaches −10^4
  // within a chunk, and fp32 differences G_i − G_j of such values lose ~1e-4 relative.
  std::vector<double> G(len);  // [len]
  double cumulative = 0.0;
  for (int64_t i = 0; i < len; ++i) {
    l2norm_scaled(in.q_row(i), dk, q_scale, &Q[i * dk]);
    l2norm_scaled(in.k_row(i), dk, 1.0f, &K[i * dk]);
    cumulative += in.gate(i);
    G[i] = cumulative;
    beta[i] = in.beta_at(i);
  }
  // Only in-chunk differences G_i − G_j ≤ 0 and G_i ≤ 0 are exponentiated, so nothing overflows.
  auto decay = [&](int64_t i, int64_t j) { return static_cast<float>(std::exp(G[i] - G[j])); };
  auto decay_from_start = [&](int64_t i) { return static_cast<float>(std::exp(G[i])); };
  const float* k = K.data();
  const float* q = Q.data();

  std::vector<float> A(len * len, 0.0f);  // [len, len] strictly lower
  for (int64_t i = 0; i < len; ++i)
    for (int64_t j = 0; j < i; ++j) A[i * len + j] = beta[i] * dot(k + i * dk, k + j * dk, dk) * decay(i, j);

  std::vector<float> vnew(len * dv);  // [len, dv], by forward substitution (rows j < i are final)
  for (int64_t i = 0; i < len; ++i) {
    const float* v = in.v_row(i);
    float* x = &vnew[i * dv];
    for (int64_t d = 0; d < dv; ++d) x[d] = beta[i] * (v[d] - decay_from_start(i) * dot(k + i * dk, S + d, dk, dv));
    for (int64_t j = 0; j < i; ++j)
      for (int64_t d = 0; d < dv; ++d) x[d] -= A[i * len + j] * vnew[j * dv + d];
  }

  for (int64_t i = 0; i < len; ++i) {  // out_i: the inter-chunk part, then the weighted V_new rows
    float* o = out + i * out_stride;
    for (int64_t d = 0; d < dv; ++d) o[d] = decay_from_start(i) * dot(q + i * dk, S + d, dk, dv);
    for (int64_t j = 0; j <= i; ++j) {
      const float weight = dot(q + i * dk, k + j * dk, dk) * decay(i, j);
      for (int64_t d = 0; d < dv; ++d) o[d] += weight * vnew[j * dv + d];
    }
  }

  // S ← exp(G_last) S + Σ_j k_j decay(last, j) V_new[j]ᵀ, in place: every read of the chunk's
  // starting state is done, and each element needs only itself.
  const int64_t last = len - 1;
  for (int64_t e = 0; e < dk; ++e)
    for (int64_t d = 0; d < dv; ++d) {
      float s = decay_from_start(last) * S[e * dv + d];
      for (int64_t j = 0; j < len; ++j) s += (k[j * dk + e] * decay(last, j)) * vnew[j * dv + d];
      S[e * dv + d] = s;
    }
}

HeadInputs head_inputs(const float* q, const float* k, const float* v, int64_t qkv_stride, const float* g,
                       const float* beta, const DeltaNetShape& s, int64_t h) {
  const int64_t kh = h / (s.num_v_heads / s.num_k_heads);  // GQA: value head h reads key head kh
  return {q + kh * s.k_dim, k + kh * s.k_dim, v + h * s.v_dim, qkv_stride, g, beta, s.num_v_heads, h};
}

}  // namespace

void RefBackend::gated_delta_rule_recurrent(const float* q, const float* k, const float* v, int64_t qkv_stride,
                                            const float* g, const float* beta, int64_t n, const DeltaNetShape& s,
                                            const float* state_in, float* state_out, float* out) {
  const FlushDenormals flush;
  const int64_t out_stride = s.num_v_heads * s.v_dim;
  // From state_in to state_out: a copy, then the rule in place on the copy.
  if (state_out != state_in) std::copy_n(state_in, s.num_v_heads * s.k_dim * s.v_dim, state_out);
  for (int64_t h = 0; h < s.num_v_heads; ++h)
    recurrent_head(head_inputs(q, k, v, qkv_stride, g, beta, s, h), n, s.k_dim, s.v_dim,
                   state_out + h * s.k_dim * s.v_dim, out + h * s.v_dim, out_stride);
}

void RefBackend::gated_delta_rule_chunked(const float* q, const float* k, const float* v, int64_t qkv_stride,
                                          const float* g, const float* beta, int64_t n, const DeltaNetShape& s,
                                          float* state, float* out) {
  const FlushDenormals flush;
  const int64_t out_stride = s.num_v_heads * s.v_dim;
  for (int64_t h = 0; h < s.num_v_heads; ++h)
    for (int64_t t0 = 0; t0 < n; t0 += kDeltaChunk) {
      const int64_t offset = t0 * qkv_stride;
      chunk_of_head(head_inputs(q + offset, k + offset, v + offset, qkv_stride, g + t0 * s.num_v_heads,
                                beta + t0 * s.num_v_heads, s, h),
                    std::min(kDeltaChunk, n - t0), s.k_dim, s.v_dim, state + h * s.k_dim * s.v_dim,
                    out + t0 * out_stride + h * s.v_dim, out_stride);
    }
}

}  // namespace ds
