// Reference rotary embedding, NeoX "rotate_half" layout on the first rotary_dim dims of each head
// (HF apply_rotary_pos_emb with partial rotary; spec §3.4). The pass-through dims are untouched.
#include "kernels/ref/ref_backend.h"

namespace ds {

void RefBackend::rope(float* x, int64_t tokens, int64_t heads, int64_t head_dim, const RopeAngles& angles) {
  const int64_t half = angles.half_dim;
  for (int64_t t = 0; t < tokens; ++t) {
    const float* cos = angles.cos + t * half;
    const float* sin = angles.sin + t * half;
    for (int64_t h = 0; h < heads; ++h) {
      float* v = x + (t * heads + h) * head_dim;
      for (int64_t j = 0; j < half; ++j) {
        const float a = v[j], b = v[j + half];
        v[j] = a * cos[j] - b * sin[j];
        v[j + half] = b * cos[j] + a * sin[j];
      }
    }
  }
}

}  // namespace ds
