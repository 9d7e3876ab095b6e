// Reference attention and KV write: the shared loops of attention.inc, one head after another;
// the write rounds to bf16 (nearest even) when the cache is bf16.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/portable_exp.h"
#include "kernels/ref/ref_backend.h"
#include "util/float16.h"

namespace ds {
namespace {
#include "kernels/attention.inc"
}  // namespace

void RefBackend::attention(const float* q, int64_t n, int64_t start_pos, int64_t num_heads, const int32_t* block_table,
                           const KvLayerView& kv, float scale, float* out) {
  std::vector<float> scores(static_cast<size_t>(start_pos + n));
  auto heads = kv.dtype == KvDtype::bf16 ? attention_heads<uint16_t> : attention_heads<float>;
  heads(q, n, start_pos, num_heads, block_table, kv, scale, out, 0, num_heads, scores.data());
}

namespace {

inline void store_kv(float x, float* to) { *to = x; }
inline void store_kv(float x, uint16_t* to) { *to = float_to_bf16(x); }

template <typename T>
void write_kv(const float* k, const float* v, int64_t n, int64_t start_pos, const int32_t* block_table,
              const KvLayerView& kv) {
  const int64_t row = kv.num_kv_heads * kv.head_dim;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t pos = start_pos + i, block = block_table[pos / kv.block_size], slot = pos % kv.block_size;
    for (int64_t h = 0; h < kv.num_kv_heads; ++h) {
      T* key = kv.key_column<T>(block, slot, h);
      for (int64_t d = 0; d < kv.head_dim; ++d) store_kv(k[i * row + h * kv.head_dim + d], key + kv.key_dim_offset<T>(d));
    }
    T* value = kv.value_row<T>(block, slot, 0);
    for (int64_t e = 0; e < row; ++e) store_kv(v[i * row + e], value + e);
  }
}

}  // namespace

void RefBackend::kv_write(const float* k, const float* v, int64_t n, int64_t start_pos, const int32_t* block_table,
                          const KvLayerView& kv) {
  if (kv.dtype == KvDtype::bf16) write_kv<uint16_t>(k, v, n, start_pos, block_table, kv);
  else write_kv<float>(k, v, n, start_pos, block_table, kv);
}

}  // namespace ds
