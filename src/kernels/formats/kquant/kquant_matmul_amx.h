// The AMX-INT8 matmul over K-quant panels for batches of kKquantAmxMinTokens tokens or more (prefill),
// shared by every type: included by each type's matmul_*_amx.cpp (compiled with -mamx-tile
// -mamx-int8 and AVX-512 VNNI) with the same policy as its VNNI kernel (kquant_matmul_avx512.h).
//
// The VNNI kernel spends most of its instructions on `vpdpbusd`, 8 per token, group of 32 inputs and
// panel; here one `tdpbssd` takes 16 tokens × 32 inputs × the panel's 16 rows, and what is left is
// the policy's per-group finish() on each token's row of the tile. The tile's int32 dot of a token
// and a row is the VNNI kernel's (integer sums: the order does not matter) — its codes less the
// policy's kCodeOffset, signed, give Σ (code − offset) · xq, which the VNNI kernel reaches by
// starting at −offset · Σ xq — and finish() is the same code on the same values, so every output is
// bit for bit the VNNI kernel's, and a token's row does not depend on its batch (tested against the
// reference).
//
// Operands: A, 16 tokens' int8 codes of one group (a tile row of 32 bytes; with kHalves, two tiles
// of 16 bytes, one per half); B, the group's codes of the panel's 16 rows less kCodeOffset, as
// signed bytes — 8 tile rows of 16 rows × 4 inputs, which is the panel layout's quads once unpacked
// by the policy's codes(), so a panel is unpacked once per token block into a scratch the token
// tiles share, and the offset is paid there, not per token. The C tiles of two groups alternate, so
// a group's products run while the previous group's rows are finished.
//
// That finish (for Q4_K a convert, a multiply and two fma per token, group and panel: 64 vector
// operations per tile product) bounds this kernel more than the tiles do: on the AMX Xeon, Q4_K
// 1.4–1.6× the VNNI kernel, Q6_K 1.55–1.6× (docs/benchmarks.md); a driver without the finish ran
// Q4_K's tiles and stores 1.7–1.9× as fast. Its 16 accumulators must stay in registers — the loops over
// tokens are unrolled, tile stores name the bytes they write — and so must its pointers: the tokens'
// scales come from the activations' tile-ordered copy, one pointer a group.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/cpu/amx_tiles.h"
#include "kernels/formats/kquant/kquant_matmul_avx512.h"

namespace ds::kernels {

// Below this many tokens the VNNI kernel runs (decode and batches of decodes up to --max-num-seqs'
// default: each weight byte is used by few tokens, and the VNNI kernel streams the panels with this
// CPU's prefetch). At 16 tokens its two tiles of 8 beat the AMX tiles (two threads over > 1 GiB of
// 6,144 × 2,048 panels, GB/s, two runs: Q4_K 10.1, 9.8 against 9.1, 8.6; Q6_K 10.8, 10.2 against
// 10.0, 9.3); from 20 tokens the two are level, and AMX pulls ahead from 32 (Q4_K 5.7 against 5.0).
inline constexpr int64_t kKquantAmxMinTokens = kKquantBatchTokens + 1;
static_assert(kKquantTokenTile == kAmxTileRows, "the activations' tiles are the kernel's token tiles");

namespace kquant_amx {

// Tiles (literal numbers, amx_tiles.h): C of an even group (half 0, half 1), C of an odd group, A
// and B (half 0, half 1). Without kHalves only C0, C2, A0 and B0 are used.
#define KQ_C0 0
#define KQ_C1 1
#define KQ_C2 2
#define KQ_C3 3
#define KQ_A0 4
#define KQ_A1 5
#define KQ_B0 6
#define KQ_B1 7

// A group's unpacked B: 8 quads × 16 rows × 4 inputs.
struct alignas(64) GroupCodes {
  std::byte bytes[8 * 64];
};

template <bool kHalves>
TileConfig config_for(int rows) {
  TileConfig config;
  const int a_bytes = kHalves ? 16 : 32, b_rows = kHalves ? 4 : 8;
  for (int t : {KQ_C0, KQ_C1, KQ_C2, KQ_C3}) config.tile(t, rows, 64);
  for (int t : {KQ_A0, KQ_A1}) config.tile(t, rows, a_bytes);
  for (int t : {KQ_B0, KQ_B1}) config.tile(t, b_rows, 64);
  return config;
}

// A thread's scratch: a panel's unpacked codes [groups][8 quads][64] and its superblocks' scales.
template <class P>
struct Scratch {
  std::vector<GroupCodes> codes;  // [groups]
  std::vector<typename P::Scales> scales;
};

template <class P>
void unpack_panel(const std::byte* panel, int64_t superblocks, Scratch<P>& s, KquantPrefetch prefetch) {
  constexpr int64_t kStride = kquant_superblock_bytes(P::kCodeBytes, P::kSideBytes);
  s.codes.resize(static_cast<size_t>(superblocks * kGroupsPerSuperblock));
  s.scales.resize(static_cast<size_t>(superblocks));
  for (int64_t b = 0; b < superblocks; ++b) {
    const std::byte* codes = panel + b * kStride;
    P::load_scales(codes + P::kCodeBytes, s.scales[static_cast<size_t>(b)]);
    for (int64_t j = 0; j < kGroupsPerSuperblock; ++j) {
      kquant_prefetch_ahead<kStride>(codes, j, prefetch);
      std::byte* quads = s.codes[static_cast<size_t>(b * kGroupsPerSuperblock + j)].bytes;
      for (int v = 0; v < 4; ++v) {
        __m512i lo, hi;
        P::codes(codes, j, v, lo, hi);
        if constexpr (P::kCodeOffset != 0) {  // as int8 exactly: Q6_K −32..31, IQ4_XS −127..113
          lo = _mm512_sub_epi8(lo, _mm512_set1_epi8(static_cast<char>(P::kCodeOffset)));
          hi = _mm512_sub_epi8(hi, _mm512_set1_epi8(static_cast<char>(P::kCodeOffset)));
        }
        _mm512_store_si512(quads + 64 * v, lo);
        _mm512_store_si512(quads + 64 * (v + 4), hi);
      }
    }
  }
}

// Group g's finish for the R tokens of a tile (from t0, a multiple of kKquantTokenTile) whose dots
// were stored at c[half][token][16].
template <class P, int R>
inline void finish_group(const KquantActivations& a, int64_t t0, int64_t g, const typename P::Scales& scales,
                         const int32_t (*c)[16][16], __m512 (&acc)[R]) {
  const int64_t j = g % kGroupsPerSuperblock;
  const int64_t at = (t0 / kKquantTokenTile * a.codes.groups + g) * kKquantTokenTile;
  const float* sx = a.tile_scales + at;              // [R]
  const float* scaled_sums = a.tile_scaled_sums + at;  // [R]
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    const __m512i lo = _mm512_load_si512(c[0][r]);  // the offset is in the codes: no start()
    __m512i hi = _mm512_setzero_si512();
    if constexpr (P::kHalves) hi = _mm512_load_si512(c[1][r]);
    acc[r] = P::finish(acc[r], lo, hi, scales, j, sx[r], scaled_sums[r]);
  }
}

// Group g's dots into C tile c_lo: one product of 32 inputs (A: 16 tokens × 32 bytes, B: 8 quads),
// or with kHalves one per half of 16 inputs (A and B of 16 inputs each), the second into c_hi.
#define KQ_PRODUCTS(c_lo, c_hi, g)                                 \
  do {                                                             \
    DS_TILE_ZERO(c_lo);                                            \
    DS_TILE_LOAD(KQ_A0, x + (g) * kKquantGroup, stride);           \
    DS_TILE_LOAD(KQ_B0, b[g].bytes, 64);                           \
    DS_TILE_DPBSSD(c_lo, KQ_A0, KQ_B0);                            \
    if constexpr (P::kHalves) {                                    \
      DS_TILE_ZERO(c_hi);                                          \
      DS_TILE_LOAD(KQ_A1, x + (g) * kKquantGroup + 16, stride);    \
      DS_TILE_LOAD(KQ_B1, b[g].bytes + 256, 64);                   \
      DS_TILE_DPBSSD(c_hi, KQ_A1, KQ_B1);                          \
    }                                                              \
  } while (0)
#define KQ_STORE(c_lo, c_hi, to)                                 \
  do {                                                           \
    DS_TILE_STORE_ROWS(c_lo, (to)[0]);                           \
    if constexpr (P::kHalves) DS_TILE_STORE_ROWS(c_hi, (to)[1]); \
  } while (0)

// R tokens from t0 × one panel, the whole k; the tiles are configured for R rows. Two groups in
// flight: group g's finish runs while group g + 1's products do.
template <class P, int R>
void token_tile(const KquantActivations& a, int64_t t0, const Scratch<P>& s, float* y, int64_t ldy, int64_t rows) {
  const int64_t groups = a.codes.groups, stride = groups * kKquantGroup;
  const int8_t* x = a.codes.q + t0 * stride;
  const GroupCodes* b = s.codes.data();
  alignas(64) int32_t c[2][2][16][16];  // [group % 2][half][token][row]
  __m512 acc[R];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
#define KQ_FINISH(g) \
  finish_group<P, R>(a, t0, g, s.scales[static_cast<size_t>((g) / kGroupsPerSuperblock)], c[(g) % 2], acc)
  for (int64_t g = 0; g < groups; g += 2) {  // groups: a multiple of 8
    KQ_PRODUCTS(KQ_C0, KQ_C1, g);
    if (g > 0) KQ_FINISH(g - 1);
    KQ_STORE(KQ_C0, KQ_C1, c[0]);
    KQ_PRODUCTS(KQ_C2, KQ_C3, g + 1);
    KQ_FINISH(g);
    KQ_STORE(KQ_C2, KQ_C3, c[1]);
  }
  KQ_FINISH(groups - 1);
#undef KQ_FINISH
  const auto mask = static_cast<__mmask16>(rows >= 16 ? 0xffff : (1u << rows) - 1);
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) _mm512_mask_storeu_ps(y + r * ldy, mask, acc[r]);
}

#undef KQ_PRODUCTS
#undef KQ_STORE
#undef KQ_C0
#undef KQ_C1
#undef KQ_C2
#undef KQ_C3
#undef KQ_A0
#undef KQ_A1
#undef KQ_B0
#undef KQ_B1

template <class P, int... R>
constexpr auto token_tiles(std::integer_sequence<int, R...>) {
  using Tile = void (*)(const KquantActivations&, int64_t, const Scratch<P>&, float*, int64_t, int64_t);
  return std::array<Tile, sizeof...(R)>{token_tile<P, R + 1>...};
}

}  // namespace kquant_amx

// y[m, n] for panels [panel_begin, panel_end) of w, m >= kKquantAmxMinTokens.
template <class P>
void matmul_kquant_amx(const std::byte* activations, int64_t m, const TensorView& w, int64_t panel_begin,
                       int64_t panel_end, float* y) {
  using namespace kquant_amx;
  const int64_t n = w.shape[0], k = w.shape[1], superblocks = k / kSuperblock;
  DS_CHECK(k % kSuperblock == 0, "K-quant kernel on ", w.name, " with rows of ", k, " values");
  DS_CHECK(m >= kKquantAmxMinTokens, "AMX K-quant kernel on ", m, " tokens");
  const KquantActivations a = kquant_activations_in(activations, m, k);
  const int64_t panel_bytes = kquant_panel_bytes(P::kCodeBytes, P::kSideBytes, k);
  static constexpr auto tiles = token_tiles<P>(std::make_integer_sequence<int, kAmxTileRows>());
  thread_local Scratch<P> scratch;
  // Each panel is read from memory once per token block, by its unpack: prefetched this CPU's
  // distance ahead, so the next panel arrives while the tiles work on this one.
  const KquantPrefetch stream = cpu_tuning().kquant_decode_prefetch;
  for_each_token_tile(
      m, k, kAmxTileRows, panel_begin, panel_end,
      [&](int64_t p) { unpack_panel<P>(w.data + p * panel_bytes, superblocks, scratch, stream); },
      [](int64_t tokens) { return config_for<P::kHalves>(static_cast<int>(tokens)); },
      [&](int64_t p, int64_t t0, int64_t tokens) {
        const int64_t first_row = p * kKquantPanelRows;
        tiles[tokens - 1](a, t0, scratch, y + t0 * n + first_row, n, std::min(kKquantPanelRows, n - first_row));
      });
}

}  // namespace ds::kernels
