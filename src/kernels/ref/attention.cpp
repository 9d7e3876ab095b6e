// Reference attention and KV write: the shared loops of attention.inc, one head after another.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/portable_exp.h"
#include "kernels/ref/ref_backend.h"

namespace ds {
namespace {
#include "kernels/attention.inc"
}  // namespace

void RefBackend::attention(const float* q, int64_t n, int64_t start_pos, int64_t num_heads, const int32_t* block_table,
                           const KvLayerView& kv, float scale, float* out) {
  std::vector<float> scores(static_cast<size_t>(start_pos + n));
  attention_heads(q, n, start_pos, num_heads, block_table, kv, scale, out, 0, num_heads, scores.data());
}

void RefBackend::kv_write(const float* k, const float* v, int64_t n, int64_t start_pos, const int32_t* block_table,
                          const KvLayerView& kv) {
  const int64_t row = kv.num_kv_heads * kv.head_dim;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t pos = start_pos + i, block = block_table[pos / kv.block_size], slot = pos % kv.block_size;
    for (int64_t h = 0; h < kv.num_kv_heads; ++h) {
      float* key = kv.key_column(block, slot, h);
      for (int64_t d = 0; d < kv.head_dim; ++d) key[d * kv.block_size] = k[i * row + h * kv.head_dim + d];
    }
    std::copy(v + i * row, v + (i + 1) * row, kv.value_row(block, slot, 0));
  }
}

}  // namespace ds
