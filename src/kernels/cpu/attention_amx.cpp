// AMX attention over a bf16 paged KV cache (attention_amx.h for the arithmetic), compiled with
// -mamx-tile -mamx-bf16, AVX-512 and without FP contraction (the softmax is attention.inc's,
// whose builds all run without it); called only at Isa::amx.
//
// A tile is a GQA group's heads × up to 32 query positions (rows, padded to whole 16-row tiles)
// against its kv head, as in attention_tiled.inc, over key blocks of 64:
//   pass 1, scores: the cache keeps keys in dim pairs with 16 keys of a block side by side
//     (backend.h), so 16 pairs × 16 keys, read with the cache's pair stride, are a B tile as they
//     lie; the rows' query pairs are the A tiles; one C tile per 16 keys;
//   pass 2, softmax: per row in key order, as attention.inc;
//   pass 3, values: a block's V rows are repacked into key pairs ([32 pairs][D][2] bf16, zero past
//     the last key, whose slots may hold anything), the rows' weights rounded to bf16 pairs are the
//     A tiles, and each row tile's outputs stay in fp32 C tiles over 64 dims at a time, stored to a
//     scratch between blocks (exact).
#include "kernels/cpu/attention_amx.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/amx_tiles.h"
#include "kernels/cpu/portable_kernels.h"
#include "kernels/portable_exp.h"
#include "util/float16.h"

namespace ds::kernels {

bool attention_amx_supports(const KvLayerView& kv) {
  return kv.dtype == KvDtype::bf16 && kv.head_dim > 0 && kv.head_dim % 32 == 0 && kv.block_size % 16 == 0;
}

namespace {

constexpr int64_t kKeyBlock = 64;  // keys per block: 4 score tiles of 16 keys, 2 value steps of 32
constexpr int64_t kRows = kAmxTileRows;

// Tiles (literal numbers, amx_tiles.h): C0–C3 results, A the rows' operand, B0–B2 keys or values.
#define C0 0
#define C1 1
#define C2 2
#define C3 3
#define TA 4
#define B0 5
#define B1 6
#define B2 7

inline int64_t round_rows(int64_t rows) { return (rows + kRows - 1) / kRows * kRows; }

// Scratch of a tile of `rows` rows whose last sees `keys` keys: max and total [rows_pad], query
// pairs [rows_pad, D / 2], scores [key blocks, rows_pad, 64], output sums [rows_pad, D], one row
// tile's weight pairs [16, 32], one block's value pairs [32, D].
int64_t tile_floats(int64_t rows, int64_t keys, int64_t D) {
  const int64_t blocks = (keys + kKeyBlock - 1) / kKeyBlock;
  return round_rows(rows) * (2 + D / 2 + blocks * kKeyBlock + D) + kRows * kKeyBlock / 2 + kKeyBlock / 2 * D;
}

struct Group {
  const float* q;  // [n, num_heads, D]
  float* out;      // [n, num_heads, D]
  int64_t num_heads, start_pos, D, h0, h1, kvh;
  const int32_t* block_table;
  const KvLayerView* kv;
};

inline uint32_t bf16_pair(float lo, float hi) {
  return static_cast<uint32_t>(float_to_bf16(lo)) | static_cast<uint32_t>(float_to_bf16(hi)) << 16;
}

inline __mmask16 first_lanes(int64_t count) {
  return static_cast<__mmask16>(count >= 16 ? 0xffff : count <= 0 ? 0 : (1u << count) - 1);
}

// row[p] ·= scale for p < count, returning the max of the results (exact in any order).
inline float scale_and_max(float* row, int64_t count, float scale, float m) {
  __m512 best = _mm512_set1_ps(m);
  const __m512 factor = _mm512_set1_ps(scale);
  for (int64_t p = 0; p < count; p += 16) {
    const __mmask16 mask = first_lanes(count - p);
    const __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, row + p), factor);
    _mm512_mask_storeu_ps(row + p, mask, v);
    best = _mm512_mask_max_ps(best, mask, best, v);
  }
  return _mm512_reduce_max_ps(best);
}

// float_to_bf16 (nearest even) of 16 finite floats.
inline __m256i round_to_bf16(__m512 v) {
  const __m512i bits = _mm512_castps_si512(v);
  const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_add_epi32(bits, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff)));
  return _mm512_cvtepi32_epi16(_mm512_srli_epi32(rounded, 16));
}

// e[p] = portable_exp(e[p] − m): a loop GCC vectorises when it stands alone.
__attribute__((noinline)) void exp_minus(float* e, int64_t count, float m) {
  for (int64_t p = 0; p < count; ++p) e[p] = portable_exp(e[p] - m);
}

// Query positions [i0, i1) × heads [h0, h1); row t = (i − i0) · heads + (h − h0).
void attention_tile(const Group& g, float scale, int64_t i0, int64_t i1, float* scratch) {
  const KvLayerView& kv = *g.kv;
  const int64_t heads = g.h1 - g.h0, rows = (i1 - i0) * heads, rows_pad = round_rows(rows);
  const int64_t D = g.D, pairs = D / 2, keys = g.start_pos + i1;
  const int64_t blocks = (keys + kKeyBlock - 1) / kKeyBlock, bs = kv.block_size;
  float* max_score = scratch;                                                   // [rows_pad]
  float* total = max_score + rows_pad;                                          // [rows_pad]
  auto* q_pairs = reinterpret_cast<uint32_t*>(total + rows_pad);                // [rows_pad, pairs]
  float* scores = reinterpret_cast<float*>(q_pairs + rows_pad * pairs);         // [blocks, rows_pad, 64]
  float* sums = scores + blocks * rows_pad * kKeyBlock;                         // [rows_pad, D]
  auto* weights = reinterpret_cast<uint32_t*>(sums + rows_pad * D);             // [16, 32]
  uint32_t* values = weights + kRows * kKeyBlock / 2;                           // [32, D]
  auto last_of = [&](int64_t t) { return g.start_pos + i0 + t / heads; };        // the last key row t sees
  auto score_row = [&](int64_t b, int64_t t) { return scores + (b * rows_pad + t) * kKeyBlock; };
  // Whether any row of the 16-row tile at r0 sees key b0: its last real row (rows go in position
  // order) does; a tile of padding rows only sees nothing.
  auto sees = [&](int64_t r0, int64_t b0) {
    const int64_t last_row = std::min(rows, r0 + kRows) - 1;
    return last_row >= r0 && last_of(last_row) >= b0;
  };

  for (int64_t t = 0; t < rows_pad; ++t) {
    uint32_t* dst = q_pairs + t * pairs;
    if (t >= rows) {
      std::memset(dst, 0, static_cast<size_t>(pairs) * 4);
      continue;
    }
    const float* qt = g.q + ((i0 + t / heads) * g.num_heads + g.h0 + t % heads) * D;
    for (int64_t j = 0; j < pairs; ++j) dst[j] = bf16_pair(qt[2 * j], qt[2 * j + 1]);
  }

  // Pass 1: scores (unscaled) for every row tile that sees the block; keys past `keys` in its last
  // block read later slots of their cache block, and those lanes are never used.
  const int64_t key_step_bytes = kAmxTileRows * 4 * bs;  // 16 dim pairs of a key block's 16 keys
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t b0 = b * kKeyBlock, subtiles = (std::min(kKeyBlock, keys - b0) + 15) / 16;
    const std::byte* key_tiles[4];
    for (int64_t c = 0; c < subtiles; ++c) {
      const int64_t k0 = b0 + 16 * c;
      key_tiles[c] = reinterpret_cast<const std::byte*>(kv.key_column<const uint16_t>(g.block_table[k0 / bs], k0 % bs, g.kvh));
    }
    for (int64_t r0 = 0; r0 < rows_pad; r0 += kRows) {
      if (!sees(r0, b0)) continue;
      DS_TILE_ZERO(C0);
      DS_TILE_ZERO(C1);
      DS_TILE_ZERO(C2);
      DS_TILE_ZERO(C3);
      for (int64_t s = 0; s < pairs / 16; ++s) {
        DS_TILE_LOAD(TA, q_pairs + r0 * pairs + 16 * s, pairs * 4);
        const int64_t offset = s * key_step_bytes, stride = 4 * bs;
        DS_TILE_LOAD(B0, key_tiles[0] + offset, stride);
        DS_TILE_DPBF16PS(C0, TA, B0);
        if (subtiles > 1) {
          DS_TILE_LOAD(B1, key_tiles[1] + offset, stride);
          DS_TILE_DPBF16PS(C1, TA, B1);
        }
        if (subtiles > 2) {
          DS_TILE_LOAD(B2, key_tiles[2] + offset, stride);
          DS_TILE_DPBF16PS(C2, TA, B2);
        }
        if (subtiles > 3) {
          DS_TILE_LOAD(B0, key_tiles[3] + offset, stride);
          DS_TILE_DPBF16PS(C3, TA, B0);
        }
      }
      float* dst = score_row(b, r0);
      DS_TILE_STORE(C0, dst, kKeyBlock * 4);
      if (subtiles > 1) DS_TILE_STORE(C1, dst + 16, kKeyBlock * 4);
      if (subtiles > 2) DS_TILE_STORE(C2, dst + 32, kKeyBlock * 4);
      if (subtiles > 3) DS_TILE_STORE(C3, dst + 48, kKeyBlock * 4);
    }
  }

  // Pass 2: · scale and the max, then exp, then each row's total in key order — 16 rows' sums at
  // once, one lane each (a lane takes its row's keys in order; rows past their last key are masked).
  for (int64_t t = 0; t < rows; ++t) {
    const int64_t last = last_of(t);
    float m = -INFINITY;
    for (int64_t b0 = 0; b0 <= last; b0 += kKeyBlock)
      m = scale_and_max(score_row(b0 / kKeyBlock, t), std::min(kKeyBlock, last + 1 - b0), scale, m);
    max_score[t] = m;
    for (int64_t b0 = 0; b0 <= last; b0 += kKeyBlock)
      exp_minus(score_row(b0 / kKeyBlock, t), std::min(kKeyBlock, last + 1 - b0), m);
  }
  for (int64_t r0 = 0; r0 < rows; r0 += kRows) {
    const int64_t in_tile = std::min(kRows, rows - r0);
    const __mmask16 lanes = first_lanes(in_tile);
    const __m512i row_offsets = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                                   _mm512_set1_epi32(static_cast<int>(kKeyBlock)));
    alignas(64) int32_t row_ends[kRows] = {};  // each lane's last key + 1
    for (int64_t r = 0; r < in_tile; ++r) row_ends[r] = static_cast<int32_t>(last_of(r0 + r) + 1);
    const __m512i ends = _mm512_load_si512(row_ends);
    __m512 sums = _mm512_setzero_ps();
    const int64_t keys_seen = last_of(r0 + in_tile - 1) + 1;
    for (int64_t b0 = 0; b0 < keys_seen; b0 += kKeyBlock) {
      const float* base = score_row(b0 / kKeyBlock, r0);
      for (int64_t p = 0; p < std::min(kKeyBlock, keys_seen - b0); ++p) {
        const __mmask16 live = lanes & _mm512_cmpgt_epi32_mask(ends, _mm512_set1_epi32(static_cast<int>(b0 + p)));
        const __m512 v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), live, row_offsets, base + p, 4);
        sums = _mm512_mask_add_ps(sums, live, sums, v);
      }
    }
    _mm512_mask_storeu_ps(total + r0, lanes, sums);
  }

  // Pass 3: the weighted sum of V, key blocks in order.
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t b0 = b * kKeyBlock, valid = std::min(kKeyBlock, keys - b0);
    // [32 key pairs][D] words: (key 2q, key 2q + 1) per dim, zero past the last key.
    const __m512i even_lo = _mm512_setr_epi32(0x00200000, 0x00210001, 0x00220002, 0x00230003, 0x00240004, 0x00250005,
                                              0x00260006, 0x00270007, 0x00280008, 0x00290009, 0x002a000a, 0x002b000b,
                                              0x002c000c, 0x002d000d, 0x002e000e, 0x002f000f);
    const __m512i even_hi = _mm512_add_epi16(even_lo, _mm512_set1_epi16(16));
    for (int64_t p = 0; p < kKeyBlock; p += 2) {
      auto row_of_key = [&](int64_t key) {
        return key < valid ? kv.value_row<const uint16_t>(g.block_table[(b0 + key) / bs], (b0 + key) % bs, g.kvh) : nullptr;
      };
      const uint16_t* v0 = row_of_key(p);
      const uint16_t* v1 = row_of_key(p + 1);
      uint32_t* dst = values + p / 2 * D;
      for (int64_t d = 0; d < D; d += 32) {  // 32 dims of each key → 32 words
        const __m512i a = v0 ? _mm512_loadu_si512(v0 + d) : _mm512_setzero_si512();
        const __m512i c = v1 ? _mm512_loadu_si512(v1 + d) : _mm512_setzero_si512();
        _mm512_storeu_si512(dst + d, _mm512_permutex2var_epi16(a, even_lo, c));
        _mm512_storeu_si512(dst + d + 16, _mm512_permutex2var_epi16(a, even_hi, c));
      }
    }
    for (int64_t r0 = 0; r0 < rows_pad; r0 += kRows) {
      if (!sees(r0, b0)) continue;
      for (int64_t r = 0; r < kRows; ++r) {  // the rows' weights, bf16 pairs, zero past each row's last key
        const int64_t t = r0 + r;
        const int64_t count = t < rows ? std::clamp<int64_t>(last_of(t) + 1 - b0, 0, kKeyBlock) : 0;
        const float* row = score_row(b, t);
        auto* dst = reinterpret_cast<uint16_t*>(weights + r * (kKeyBlock / 2));  // key p's weight at p
        const __m512 divisor = _mm512_set1_ps(t < rows ? total[t] : 1.0f);
        for (int64_t p = 0; p < kKeyBlock; p += 16) {
          const __mmask16 mask = first_lanes(count - p);
          const __m512 w = _mm512_maskz_div_ps(mask, _mm512_maskz_loadu_ps(mask, row + p), divisor);
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + p), round_to_bf16(w));
        }
      }
      for (int64_t d0 = 0; d0 < D; d0 += 64) {
        float* acc = sums + r0 * D + d0;
        const int64_t acc_stride = D * 4, v_stride = D * 4;
        const bool four = d0 + 64 <= D;  // D is a multiple of 32: 32 or 64 dims in this pass
        if (b == 0) {
          DS_TILE_ZERO(C0);
          DS_TILE_ZERO(C1);
          DS_TILE_ZERO(C2);
          DS_TILE_ZERO(C3);
        } else {
          DS_TILE_LOAD(C0, acc, acc_stride);
          DS_TILE_LOAD(C1, acc + 16, acc_stride);
          if (four) {
            DS_TILE_LOAD(C2, acc + 32, acc_stride);
            DS_TILE_LOAD(C3, acc + 48, acc_stride);
          }
        }
        for (int64_t s = 0; s < 2; ++s) {  // key pairs 16s .. 16s + 15 of the block
          DS_TILE_LOAD(TA, weights + 16 * s, kKeyBlock / 2 * 4);
          const uint32_t* v = values + 16 * s * D + d0;
          DS_TILE_LOAD(B0, v, v_stride);
          DS_TILE_DPBF16PS(C0, TA, B0);
          DS_TILE_LOAD(B1, v + 16, v_stride);
          DS_TILE_DPBF16PS(C1, TA, B1);
          if (four) {
            DS_TILE_LOAD(B2, v + 32, v_stride);
            DS_TILE_DPBF16PS(C2, TA, B2);
            DS_TILE_LOAD(B0, v + 48, v_stride);
            DS_TILE_DPBF16PS(C3, TA, B0);
          }
        }
        DS_TILE_STORE(C0, acc, acc_stride);
        DS_TILE_STORE(C1, acc + 16, acc_stride);
        if (four) {
          DS_TILE_STORE(C2, acc + 32, acc_stride);
          DS_TILE_STORE(C3, acc + 48, acc_stride);
        }
      }
    }
  }
  for (int64_t t = 0; t < rows; ++t)
    std::memcpy(g.out + ((i0 + t / heads) * g.num_heads + g.h0 + t % heads) * D, sums + t * D,
                static_cast<size_t>(D) * sizeof(float));
}

#undef C0
#undef C1
#undef C2
#undef C3
#undef TA
#undef B0
#undef B1
#undef B2

}  // namespace

int64_t attention_amx_scratch_floats(int64_t n, int64_t start_pos, int64_t group, int64_t head_dim) {
  int64_t positions = std::min(n, kAttentionTilePositions);
  while (positions > 1 && tile_floats(positions * group, start_pos + n, head_dim) > kAttentionScratchBudget) positions /= 2;
  return tile_floats(positions * group, start_pos + n, head_dim);
}

void attention_heads_amx(const float* q, int64_t n, int64_t start_pos, int64_t num_heads, const int32_t* block_table,
                         const KvLayerView& kv, float scale, float* out, int64_t h_begin, int64_t h_end, float* scratch,
                         int64_t scratch_floats) {
  TileConfig config;
  for (int t = 0; t < 8; ++t) config.tile(t, kAmxTileRows, kAmxTileBytes);
  const TileScope tiles(config);
  const int64_t group = num_heads / kv.num_kv_heads;
  for (int64_t kvh = h_begin / group; kvh * group < h_end; ++kvh) {
    const int64_t h0 = std::max(h_begin, kvh * group), h1 = std::min(h_end, (kvh + 1) * group);
    const Group g{q, out, num_heads, start_pos, kv.head_dim, h0, h1, kvh, block_table, &kv};
    int64_t positions = std::min(n, kAttentionTilePositions);
    while (positions > 1 && tile_floats(positions * (h1 - h0), start_pos + n, kv.head_dim) > scratch_floats) --positions;
    for (int64_t i0 = 0; i0 < n; i0 += positions) attention_tile(g, scale, i0, std::min(n, i0 + positions), scratch);
  }
}

}  // namespace ds::kernels
