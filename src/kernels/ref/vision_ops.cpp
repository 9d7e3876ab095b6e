// Reference vision-tower ops (backend.h): plain loops in a fixed order, one operation at a time.
// LayerNorm statistics are accumulated in double: the reference is the accurate statement of the
// op (torch's fp32 Welford moments differ from it by ~1e-7 relative).
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/portable_exp.h"
#include "kernels/ref/ref_backend.h"
#include "kernels/weight_access.h"
#include "util/float16.h"

namespace ds {

void RefBackend::layer_norm(const float* x, int64_t rows, int64_t dim, const TensorView& w, const TensorView& b,
                            float eps, float* out) {
  std::vector<float> weight(static_cast<size_t>(dim)), bias(static_cast<size_t>(dim));  // [dim] each
  weight_span(w, 0, dim, weight.data());
  weight_span(b, 0, dim, bias.data());
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * dim;
    double sum = 0;
    for (int64_t i = 0; i < dim; ++i) sum += row[i];
    const double mean = sum / static_cast<double>(dim);
    double squares = 0;
    for (int64_t i = 0; i < dim; ++i) squares += (row[i] - mean) * (row[i] - mean);
    const float inv_std = static_cast<float>(1.0 / std::sqrt(squares / static_cast<double>(dim) + eps));
    const float mean_f = static_cast<float>(mean);
    for (int64_t i = 0; i < dim; ++i) out[r * dim + i] = (row[i] - mean_f) * inv_std * weight[i] + bias[i];
  }
}

void RefBackend::add_bias(float* x, int64_t rows, int64_t dim, const TensorView& bias) {
  std::vector<float> b(static_cast<size_t>(dim));  // [dim]
  weight_span(bias, 0, dim, b.data());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < dim; ++i) x[r * dim + i] += b[i];
}

void RefBackend::gelu(float* x, int64_t n, Gelu kind) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  constexpr float kInvSqrt2 = 0.7071067811865476f;
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    x[i] = kind == Gelu::tanh ? 0.5f * v * (1.0f + std::tanh(kSqrt2OverPi * (v + 0.044715f * v * v * v)))
                              : 0.5f * v * (1.0f + std::erf(v * kInvSqrt2));
  }
}

// f32: scores, softmax and the weighted sum of V in fp32, std::exp. bf16 (fast mode): the form
// backend.h defines, written out: exact products of bf16 values added one at a time (odd dim, then
// even dim of each pair; later key, then earlier key of each pair), e^x through portable_exp as every
// fast kernel computes it, each weight rounded to bf16 once.
void RefBackend::attention_bidirectional(const float* q, const float* k, const float* v, int64_t n, int64_t num_heads,
                                         int64_t head_dim, float scale, float* out, bool round_input_bf16) {
  const int64_t row = num_heads * head_dim;  // floats per token
  std::vector<float> scores(static_cast<size_t>(n));  // [n]: one query's scores, then its weights
  auto input = [&](float x) { return round_input_bf16 ? bf16_to_float(float_to_bf16(x)) : x; };
  for (int64_t h = 0; h < num_heads; ++h) {
    for (int64_t i = 0; i < n; ++i) {
      const float* qi = q + i * row + h * head_dim;
      float max_score = -INFINITY;
      for (int64_t j = 0; j < n; ++j) {
        const float* kj = k + j * row + h * head_dim;
        float dot = 0.0f;
        if (round_input_bf16) {
          for (int64_t d = 0; d < head_dim; d += 2) {
            if (d + 1 < head_dim) dot += input(qi[d + 1]) * input(kj[d + 1]);
            dot += input(qi[d]) * input(kj[d]);
          }
        } else {
          for (int64_t d = 0; d < head_dim; ++d) dot += qi[d] * kj[d];
        }
        scores[static_cast<size_t>(j)] = dot * scale;
        max_score = std::max(max_score, scores[static_cast<size_t>(j)]);
      }
      float total = 0.0f;
      for (int64_t j = 0; j < n; ++j) {
        float& s = scores[static_cast<size_t>(j)];
        s = round_input_bf16 ? input(portable_exp(s - max_score)) : std::exp(s - max_score);
        total += s;
      }
      float* oi = out + i * row + h * head_dim;
      if (round_input_bf16) {
        for (int64_t d = 0; d < head_dim; ++d) {
          float sum = 0.0f;
          for (int64_t j = 0; j < n; j += 2) {
            if (j + 1 < n) sum += scores[static_cast<size_t>(j + 1)] * input(v[(j + 1) * row + h * head_dim + d]);
            sum += scores[static_cast<size_t>(j)] * input(v[j * row + h * head_dim + d]);
          }
          oi[d] = sum / total;
        }
        continue;
      }
      for (int64_t d = 0; d < head_dim; ++d) oi[d] = 0.0f;
      for (int64_t j = 0; j < n; ++j) {
        const float p = scores[static_cast<size_t>(j)] / total;
        const float* vj = v + j * row + h * head_dim;
        for (int64_t d = 0; d < head_dim; ++d) oi[d] += p * vj[d];
      }
    }
  }
}

}  // namespace ds
