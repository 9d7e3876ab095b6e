// Reference causal softmax attention over a paged KV cache (HF eager_attention_forward: scores
// in fp32, softmax in fp32, GQA by kv head = query head / group). Spec §3.3 steps 5–6.
#include <cmath>
#include <vector>

#include "kernels/ref/ref_backend.h"

namespace ds {

void RefBackend::attention(const float* q, int64_t n, int64_t start_pos, int64_t num_heads, const int32_t* block_table,
                           const KvLayerView& kv, float scale, float* out) {
  const int64_t D = kv.head_dim, group = num_heads / kv.num_kv_heads;
  auto key = [&](int64_t pos, int64_t h) {
    return kv.k + block_table[pos / kv.block_size] * kv.block_stride + ((pos % kv.block_size) * kv.num_kv_heads + h) * D;
  };
  auto value = [&](int64_t pos, int64_t h) {
    return kv.v + block_table[pos / kv.block_size] * kv.block_stride + ((pos % kv.block_size) * kv.num_kv_heads + h) * D;
  };
  std::vector<float> scores(static_cast<size_t>(start_pos + n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t last = start_pos + i;  // attends to 0 .. last
    for (int64_t h = 0; h < num_heads; ++h) {
      const int64_t kvh = h / group;
      const float* qi = q + (i * num_heads + h) * D;
      float max_score = -INFINITY;
      for (int64_t p = 0; p <= last; ++p) {
        const float* kp = key(p, kvh);
        float dot = 0.0f;
        for (int64_t d = 0; d < D; ++d) dot += qi[d] * kp[d];
        scores[p] = dot * scale;
        max_score = std::max(max_score, scores[p]);
      }
      float total = 0.0f;
      for (int64_t p = 0; p <= last; ++p) {
        scores[p] = std::exp(scores[p] - max_score);
        total += scores[p];
      }
      float* o = out + (i * num_heads + h) * D;
      for (int64_t d = 0; d < D; ++d) o[d] = 0.0f;
      for (int64_t p = 0; p <= last; ++p) {
        const float weight = scores[p] / total;
        const float* vp = value(p, kvh);
        for (int64_t d = 0; d < D; ++d) o[d] += weight * vp[d];
      }
    }
  }
}

void RefBackend::kv_write(const float* k, const float* v, int64_t n, int64_t start_pos, const int32_t* block_table,
                          const KvLayerView& kv) {
  const int64_t row = kv.num_kv_heads * kv.head_dim;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t pos = start_pos + i;
    const int64_t offset = block_table[pos / kv.block_size] * kv.block_stride + (pos % kv.block_size) * row;
    std::copy(k + i * row, k + (i + 1) * row, kv.k + offset);
    std::copy(v + i * row, v + (i + 1) * row, kv.v + offset);
  }
}

}  // namespace ds
