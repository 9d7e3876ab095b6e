// The portable kernels — the loops of src/kernels/*.inc (tiled gated delta rule, causal conv, tiled
// paged attention, norms, element-wise ops, RoPE) — built once per ISA from portable_kernels.cpp
// without FP contraction, so each build vectorises and stays bit-identical to the reference (ref/:
// the tiled kernels compute the plain loops of ref/gated_delta_rule.cpp and attention.inc
// exactly). Each entry covers a range (heads, channels, rows, elements or tokens) so the CPU
// backend can split work over threads.
#pragma once

#include <algorithm>

#include "io/tensor_view.h"
#include "kernels/delta_scratch.h"

namespace ds::kernels {

struct PortableKernels {
  // From state_in to state_out (the same array: in place).
  void (*delta_recurrent)(const float* q, const float* k, const float* v, int64_t qkv_stride, const float* g,
                          const float* beta, int64_t n, const DeltaNetShape& s, const float* state_in,
                          float* state_out, float* out, int64_t h_begin, int64_t h_end, DeltaScratch& scratch);
  // In place.
  void (*delta_chunked)(const float* q, const float* k, const float* v, int64_t qkv_stride, const float* g,
                        const float* beta, int64_t n, const DeltaNetShape& s, float* state, float* out,
                        int64_t h_begin, int64_t h_end, DeltaScratch& scratch);
  // history [K − 1, c_end − c_begin]: scratch.
  void (*conv)(const float* x, int64_t n, int64_t channels, const float* taps, int64_t kernel, const float* state_in,
               float* state_out, float* out, int64_t c_begin, int64_t c_end, float* history);
  // Tiled (attention_tiled.inc). scores: scratch of scores_floats, at least attention_tile_floats(1, group,
  // start_pos + n, head_dim); attention_scratch_floats() gives room for a whole tile.
  void (*attention)(const float* q, int64_t n, int64_t start_pos, int64_t num_heads, const int32_t* block_table,
                    const KvLayerView& kv, float scale, float* out, int64_t h_begin, int64_t h_end, float* scores,
                    int64_t scores_floats);
  // weight_buffer: scratch of dim floats.
  void (*rms_norm)(const float* x, int64_t dim, const TensorView& w, float eps, float* out, int64_t r_begin,
                   int64_t r_end, float* weight_buffer);
  void (*rms_norm_gated)(const float* x, const float* z, int64_t dim, const TensorView& w, float eps, float* out,
                         int64_t r_begin, int64_t r_end, float* weight_buffer);
  void (*silu_mul)(const float* gate, const float* up, float* out, int64_t begin, int64_t end);
  void (*sigmoid_gate)(float* x, const float* gate, int64_t begin, int64_t end);
  void (*add)(float* x, const float* y, int64_t begin, int64_t end);
  void (*rope)(float* x, int64_t heads, int64_t head_dim, const RopeAngles& angles, int64_t t_begin, int64_t t_end);
  // The vision tower's ops (vision_ops.inc). buffer: scratch of 2 · dim (layer_norm) or dim (add_bias) floats.
  void (*layer_norm)(const float* x, int64_t dim, const TensorView& w, const TensorView& b, float eps, float* out,
                     int64_t r_begin, int64_t r_end, float* buffer);
  void (*add_bias)(float* x, int64_t dim, const TensorView& bias, int64_t r_begin, int64_t r_end, float* buffer);
  void (*gelu_tanh)(float* x, int64_t begin, int64_t end);
  void (*gelu_erf)(float* x, int64_t begin, int64_t end);
  // Tiles [tile_begin, tile_end) of vision_attention_tiles(n, heads); scratch of
  // vision_attention_scratch_floats(head_dim).
  void (*attention_bidirectional)(const float* q, const float* k, const float* v, int64_t n, int64_t num_heads,
                                  int64_t head_dim, float scale, float* out, int64_t tile_begin, int64_t tile_end,
                                  float* scratch);
  // Its fast-mode form (bf16 products, vision_attention_bf16.inc) over the same tiles; scratch of
  // vision_attention_bf16_scratch_floats(n, head_dim). Null where the build lacks AVX-512 BF16.
  void (*attention_bidirectional_bf16)(const float* q, const float* k, const float* v, int64_t n, int64_t num_heads,
                                       int64_t head_dim, float scale, float* out, int64_t tile_begin,
                                       int64_t tile_end, float* scratch);
};

// Query rows per bidirectional attention tile and keys per key block: a tile keeps its rows' running
// max, total and weighted sum of V while the key blocks stream past (online softmax), so memory is
// O(tile), never O(n²).
inline constexpr int64_t kVisionQueryTile = 32;
inline constexpr int64_t kVisionKeyBlock = 64;

inline int64_t vision_attention_tiles(int64_t n, int64_t num_heads) {
  return num_heads * ((n + kVisionQueryTile - 1) / kVisionQueryTile);
}
// Scratch floats of one tile: the key block transposed, its scores, the running sums and max / total.
inline int64_t vision_attention_scratch_floats(int64_t head_dim) {
  return head_dim * kVisionKeyBlock + kVisionQueryTile * (kVisionKeyBlock + head_dim + 2);
}
// Scratch words of the bf16 form: one head's K and V as bf16 pairs (n rounded up to whole key
// blocks, head_dim to whole dim pairs and vectors), a tile's query pairs, running sums
// and max / total, and one register step's scores and weight pairs.
inline int64_t vision_attention_bf16_scratch_floats(int64_t n, int64_t head_dim) {
  const int64_t keys = (n + kVisionKeyBlock - 1) / kVisionKeyBlock * kVisionKeyBlock;
  const int64_t pairs = (head_dim + 1) / 2, dims = (head_dim + 15) / 16 * 16;
  return pairs * keys + keys / 2 * dims + kVisionQueryTile * (pairs + dims + 2) + 4 * kVisionKeyBlock * 2;
}


// Query positions per attention tile: each tile reads its kv head's K and V once, so at 32 the
// memory traffic of a long prompt is 1/128 of one query at a time (32 positions × 4 heads of a
// group); 16 measured ~10% slower at 8K tokens, 4 nearly 2× slower.
inline constexpr int64_t kAttentionTilePositions = 32;
// Keys per block of the tiled attention: their K (or V) rows, 64 KiB at head_dim 256, stay in L2
// while every row of a tile uses them (16 and 32 measured a few % slower).
inline constexpr int64_t kAttentionKeyBlock = 64;

// Scratch of one attention tile of `positions` query positions × `heads` heads when the last sees
// `keys` keys: each row's max and total, its scores in whole key blocks, and (bf16 cache) its query
// rounded to bf16 pairs.
inline int64_t attention_tile_floats(int64_t positions, int64_t heads, int64_t keys, int64_t head_dim) {
  const int64_t blocks = (keys + kAttentionKeyBlock - 1) / kAttentionKeyBlock;
  return positions * heads * (2 + blocks * kAttentionKeyBlock + head_dim / 2);
}
// Attention scratch per thread: up to 8 MiB of floats, unless one position alone needs more (a
// GQA group of 4 heads over more than 512K keys).
inline constexpr int64_t kAttentionScratchBudget = int64_t{1} << 21;
// Floats of attention scratch per thread: one tile of up to kAttentionTilePositions positions × the
// heads of a GQA group, as many positions as fit in the budget but at least one.
inline int64_t attention_scratch_floats(int64_t n, int64_t start_pos, int64_t group, int64_t head_dim) {
  const int64_t one = attention_tile_floats(1, group, start_pos + n, head_dim);
  return one * std::clamp<int64_t>(kAttentionScratchBudget / one, 1, std::min(n, kAttentionTilePositions));
}

const PortableKernels& portable_kernels_avx512();
const PortableKernels& portable_kernels_avx2();

}  // namespace ds::kernels
