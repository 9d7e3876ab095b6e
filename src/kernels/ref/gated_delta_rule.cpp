// Reference gated delta rule (spec §4.1 step 7–8 and §4.2; HF torch_recurrent_gated_delta_rule /
// torch_chunk_gated_delta_rule). All fp32. Per value head h, state S [k_dim, v_dim]:
//   S' = exp(g_t) S;  e_t = v_t − S'ᵀ k_t;  S = S' + k_t (β_t e_t)ᵀ;  o_t = Sᵀ q_t
// with q, k l2-normalised (x · rsqrt(Σx² + 1e-6)) and q scaled by 1/sqrt(k_dim).
#include <cmath>
#include <vector>

#include "kernels/ref/ref_backend.h"

namespace ds {
namespace {

constexpr int64_t kChunk = 64;

// dst = l2norm(src) · scale over `dim` values.
void l2norm_scaled(const float* src, int64_t dim, float scale, float* dst) {
  float sum = 0.0f;
  for (int64_t i = 0; i < dim; ++i) sum += src[i] * src[i];
  const float inv = 1.0f / std::sqrt(sum + 1e-6f);
  for (int64_t i = 0; i < dim; ++i) dst[i] = src[i] * inv * scale;
}

}  // namespace

void RefBackend::gated_delta_rule_recurrent(const float* q, const float* k, const float* v, int64_t qkv_stride,
                                            const float* g, const float* beta, int64_t n, const DeltaNetShape& s,
                                            float* state, float* out) {
  const int64_t ratio = s.num_v_heads / s.num_k_heads;
  const float q_scale = 1.0f / std::sqrt(static_cast<float>(s.k_dim));
  std::vector<float> qn(s.k_dim), kn(s.k_dim), delta(s.v_dim);
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t h = 0; h < s.num_v_heads; ++h) {
      const int64_t kh = h / ratio;
      l2norm_scaled(q + t * qkv_stride + kh * s.k_dim, s.k_dim, q_scale, qn.data());
      l2norm_scaled(k + t * qkv_stride + kh * s.k_dim, s.k_dim, 1.0f, kn.data());
      const float* vt = v + t * qkv_stride + h * s.v_dim;
      const float decay = std::exp(g[t * s.num_v_heads + h]);
      const float b = beta[t * s.num_v_heads + h];
      float* S = state + h * s.k_dim * s.v_dim;
      for (int64_t i = 0; i < s.k_dim * s.v_dim; ++i) S[i] *= decay;
      for (int64_t j = 0; j < s.v_dim; ++j) {
        float memory = 0.0f;
        for (int64_t i = 0; i < s.k_dim; ++i) memory += S[i * s.v_dim + j] * kn[i];
        delta[j] = (vt[j] - memory) * b;
      }
      for (int64_t i = 0; i < s.k_dim; ++i)
        for (int64_t j = 0; j < s.v_dim; ++j) S[i * s.v_dim + j] += kn[i] * delta[j];
      float* o = out + t * s.num_v_heads * s.v_dim + h * s.v_dim;
      for (int64_t j = 0; j < s.v_dim; ++j) {
        float acc = 0.0f;
        for (int64_t i = 0; i < s.k_dim; ++i) acc += S[i * s.v_dim + j] * qn[i];
        o[j] = acc;
      }
    }
  }
}

void RefBackend::gated_delta_rule_chunked(const float* q, const float* k, const float* v, int64_t qkv_stride,
                                          const float* g, const float* beta, int64_t n, const DeltaNetShape& s,
                                          float* state, float* out) {
  const int64_t ratio = s.num_v_heads / s.num_k_heads;
  const int64_t dk = s.k_dim, dv = s.v_dim;
  const float q_scale = 1.0f / std::sqrt(static_cast<float>(dk));
  // Per-chunk buffers (one head at a time).
  std::vector<float> Q(kChunk * dk), K(kChunk * dk), B(kChunk);
  std::vector<double> G(kChunk);  // cumulative log-decay, see below
  std::vector<float> A(kChunk * kChunk), vnew(kChunk * dv), next(dk * dv);

  for (int64_t h = 0; h < s.num_v_heads; ++h) {
    const int64_t kh = h / ratio;
    float* S = state + h * dk * dv;  // [dk, dv]
    for (int64_t t0 = 0; t0 < n; t0 += kChunk) {
      // A chunk shorter than 64 equals HF's zero padding: padded rows have β = 0 and g = 0, so they
      // neither touch the state nor change the cumulative gate of the real rows.
      const int64_t len = std::min(kChunk, n - t0);
      // The cumulative gate is kept in double: with strong decays (g ≈ −200 per token) G reaches
      // −10^4 within a chunk, and fp32 differences G_i − G_j of such values lose ~1e-4 relative.
      double cumulative = 0.0;
      for (int64_t i = 0; i < len; ++i) {
        const int64_t t = t0 + i;
        l2norm_scaled(q + t * qkv_stride + kh * dk, dk, q_scale, &Q[i * dk]);
        l2norm_scaled(k + t * qkv_stride + kh * dk, dk, 1.0f, &K[i * dk]);
        cumulative += g[t * s.num_v_heads + h];
        G[i] = cumulative;
        B[i] = beta[t * s.num_v_heads + h];
      }
      // Strictly lower A[i][j] = β_i (k_i·k_j) exp(G_i − G_j), j < i. Only in-chunk differences
      // G_i − G_j ≤ 0 and G_i ≤ 0 are exponentiated, so nothing overflows.
      for (int64_t i = 0; i < len; ++i)
        for (int64_t j = 0; j < i; ++j) {
          float dot = 0.0f;
          for (int64_t d = 0; d < dk; ++d) dot += K[i * dk + d] * K[j * dk + d];
          A[i * kChunk + j] = B[i] * dot * static_cast<float>(std::exp(G[i] - G[j]));
        }
      // V_new solves (I + A) V_new = β ⊙ (V − exp(G) K S) by forward substitution. This is HF's
      // U − W S with (I + A) U = β V and (I + A) W = β exp(G) K, solved for the residual directly:
      // one right-hand side of dV columns instead of dV + dK, and no difference of two products.
      for (int64_t i = 0; i < len; ++i) {
        const float* vi = v + (t0 + i) * qkv_stride + h * dv;
        const auto decay_i = static_cast<float>(std::exp(G[i]));
        for (int64_t d = 0; d < dv; ++d) {
          float predicted = 0.0f;
          for (int64_t e = 0; e < dk; ++e) predicted += K[i * dk + e] * S[e * dv + d];
          vnew[i * dv + d] = B[i] * (vi[d] - decay_i * predicted);
        }
        for (int64_t j = 0; j < i; ++j) {
          const float a = A[i * kChunk + j];
          for (int64_t d = 0; d < dv; ++d) vnew[i * dv + d] -= a * vnew[j * dv + d];
        }
      }
      // out_i = exp(G_i) q_iᵀ S + Σ_{j≤i} (q_i·k_j) exp(G_i − G_j) V_new[j]
      for (int64_t i = 0; i < len; ++i) {
        float* o = out + (t0 + i) * s.num_v_heads * dv + h * dv;
        const auto inter = static_cast<float>(std::exp(G[i]));
        for (int64_t d = 0; d < dv; ++d) {
          float acc = 0.0f;
          for (int64_t e = 0; e < dk; ++e) acc += Q[i * dk + e] * S[e * dv + d];
          o[d] = inter * acc;
        }
        for (int64_t j = 0; j <= i; ++j) {
          float dot = 0.0f;
          for (int64_t e = 0; e < dk; ++e) dot += Q[i * dk + e] * K[j * dk + e];
          const float weight = dot * static_cast<float>(std::exp(G[i] - G[j]));
          for (int64_t d = 0; d < dv; ++d) o[d] += weight * vnew[j * dv + d];
        }
      }
      // S ← exp(G_last) S + Σ_j k_j exp(G_last − G_j) V_new[j]ᵀ
      const double last = G[len - 1];
      const auto decay = static_cast<float>(std::exp(last));
      for (int64_t e = 0; e < dk; ++e)
        for (int64_t d = 0; d < dv; ++d) next[e * dv + d] = decay * S[e * dv + d];
      for (int64_t j = 0; j < len; ++j) {
        const auto w = static_cast<float>(std::exp(last - G[j]));
        for (int64_t e = 0; e < dk; ++e) {
          const float kw = K[j * dk + e] * w;
          for (int64_t d = 0; d < dv; ++d) next[e * dv + d] += kw * vnew[j * dv + d];
        }
      }
      std::copy(next.begin(), next.end(), S);
    }
  }
}

}  // namespace ds
