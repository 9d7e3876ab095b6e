// The token-mixer loops (gated_delta_rule.inc, conv.inc, attention.inc) compiled for avx512
// (flags in src/kernels/CMakeLists.txt: no FP contraction, so results equal the reference's).
#include <algorithm>
#include <cmath>

#include "kernels/cpu/mixer_kernels.h"
#include "kernels/weight_access.h"

namespace ds::kernels {
namespace {
#include "kernels/attention.inc"
#include "kernels/conv.inc"
#include "kernels/gated_delta_rule.inc"
}  // namespace

DS_DELTA_KERNEL(delta_recurrent_avx512) {
  delta_recurrent_heads(q, k, v, qkv_stride, g, beta, n, s, state, out, h_begin, h_end, scratch);
}
DS_DELTA_KERNEL(delta_chunked_avx512) {
  delta_chunked_heads(q, k, v, qkv_stride, g, beta, n, s, state, out, h_begin, h_end, scratch);
}
DS_CONV_KERNEL(conv_avx512) { conv_channels(x, n, channels, w, state, out, c_begin, c_end, taps, history); }
DS_ATTENTION_KERNEL(attention_avx512) {
  attention_heads(q, n, start_pos, num_heads, block_table, kv, scale, out, h_begin, h_end, scores);
}

}  // namespace ds::kernels
