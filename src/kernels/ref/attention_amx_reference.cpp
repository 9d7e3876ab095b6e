// The AMX attention's arithmetic (kernels/cpu/attention_amx.h) in plain loops, one query head and
// position at a time: the oracle of the AMX kernel. Built without FP contraction, like the
// reference of attention.inc, whose softmax it repeats.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/attention_amx.h"
#include "kernels/portable_exp.h"
#include "util/check.h"
#include "util/float16.h"

namespace ds::kernels {

namespace {
constexpr int64_t kDimPairsPerStep = 16;  // a score's tile step: 32 dims
constexpr int64_t kKeysPerStep = 32;      // a value's tile step: 16 key pairs
}  // namespace

void attention_amx_reference(const float* q, int64_t n, int64_t start_pos, int64_t num_heads,
                             const int32_t* block_table, const KvLayerView& kv, float scale, float* out) {
  DS_CHECK(attention_amx_supports(kv), "AMX attention reference on an unsupported cache");
  const int64_t D = kv.head_dim, group = num_heads / kv.num_kv_heads;
  auto key = [&](int64_t pos, int64_t kvh) {
    return kv.key_column<const uint16_t>(block_table[pos / kv.block_size], pos % kv.block_size, kvh);
  };
  auto value = [&](int64_t pos, int64_t kvh) {
    return kv.value_row<const uint16_t>(block_table[pos / kv.block_size], pos % kv.block_size, kvh);
  };
  std::vector<float> qb(static_cast<size_t>(D));                          // [D] the query rounded to bf16
  std::vector<float> scores(static_cast<size_t>(start_pos + n));          // [keys]
  std::vector<float> weights(static_cast<size_t>(start_pos + n + kKeysPerStep));  // [keys, padded] bf16 values
  for (int64_t h = 0; h < num_heads; ++h) {
    const int64_t kvh = h / group;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t last = start_pos + i;
      const float* qi = q + (i * num_heads + h) * D;
      for (int64_t d = 0; d < D; ++d) qb[d] = bf16_to_float(float_to_bf16(qi[d]));
      float max_score = -INFINITY;
      for (int64_t p = 0; p <= last; ++p) {
        const uint16_t* kp = key(p, kvh);
        float acc = 0.0f;
        for (int64_t j0 = 0; j0 < D / 2; j0 += kDimPairsPerStep) {
          float even = 0.0f, odd = 0.0f;
          for (int64_t j = j0; j < j0 + kDimPairsPerStep; ++j) {
            const uint16_t* pair = kp + kv.key_dim_offset<uint16_t>(2 * j);
            even += qb[2 * j] * bf16_to_float(pair[0]);
            odd += qb[2 * j + 1] * bf16_to_float(pair[1]);
          }
          acc += even + odd;
        }
        scores[p] = acc * scale;
        max_score = std::max(max_score, scores[p]);
      }
      for (int64_t p = 0; p <= last; ++p) scores[p] = portable_exp(scores[p] - max_score);
      float total = 0.0f;
      for (int64_t p = 0; p <= last; ++p) total += scores[p];
      const int64_t padded = (last + kKeysPerStep) / kKeysPerStep * kKeysPerStep;  // keys 0 .. last, whole steps
      for (int64_t p = 0; p < padded; ++p) weights[p] = p <= last ? bf16_to_float(float_to_bf16(scores[p] / total)) : 0.0f;
      float* o = out + (i * num_heads + h) * D;
      for (int64_t d = 0; d < D; ++d) {
        float acc = 0.0f;
        for (int64_t p0 = 0; p0 < padded; p0 += kKeysPerStep) {
          float even = 0.0f, odd = 0.0f;  // keys past `last` add +0 (weight 0 times value 0)
          for (int64_t p = p0; p < p0 + kKeysPerStep; p += 2) {
            even += weights[p] * (p <= last ? bf16_to_float(value(p, kvh)[d]) : 0.0f);
            odd += weights[p + 1] * (p + 1 <= last ? bf16_to_float(value(p + 1, kvh)[d]) : 0.0f);
          }
          acc += even + odd;
        }
        o[d] = acc;
      }
    }
  }
}

}  // namespace ds::kernels
