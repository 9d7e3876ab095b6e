// AMX-INT8 tiles for int8 batches (compiled with -mamx-tile -mamx-int8 and AVX-512; called only at
// Isa::amx): every call of 2 tokens or more — a verify of k drafts, a few sequences decoding
// together, prefill — in tiles of 16 token-planes. One token alone takes the VNNI kernel: it leaves
// the tiles nothing to share. A call of one tile streams the panels once; up to kStreamTokens, a
// panel's first tile streams it and the others read it from L2; past that, prefill's signed copy.
//
// Per panel (32 outputs) and group of 32 inputs: A is a tile's token-plane activation rows of the
// group (int8_activations.h: a token's planes are consecutive rows, all `groups · 32` bytes apart),
// B the group's 8 quads for outputs 0–15 and 16–31, read straight from the panel (128 bytes apart),
// and one `tdpbsud` per half gives every token-plane's int32 dot. Each is the VNNI kernel's sum
// (integers: the order does not matter), started at the same −128 · Σ q offset, the planes combined
// as 256 · hi + lo, then the same fma(float(dot), scale_w · scale_x, acc) — so the outputs are the
// VNNI kernel's bits and the reference's (tested at every batch size, across token blocks, and both
// plane counts). The per-group finish, not the tiles, bounds the kernel in prefill; it keeps its
// accumulators in registers (unrolled token loops, tile stores that name their bytes), which an
// earlier AMX version of this arithmetic did not, and ran no faster than VNNI (docs/benchmarks.md).
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "kernels/cpu/amx_tiles.h"
#include "kernels/cpu/cpu_tuning.h"
#include "kernels/cpu/stream_prefetch.h"
#include "kernels/formats/int8_panels/int8_kernels.h"
#include "kernels/formats/int8_panels/int8_panels.h"
#include "util/check.h"

namespace ds::kernels {
namespace {

// Tiles (literal numbers, amx_tiles.h): C of outputs 0–15 and 16–31 for even and odd groups, A of
// even and odd groups, B of outputs 0–15 and 16–31.
#define I8_C0 0
#define I8_C1 1
#define I8_C2 2
#define I8_C3 3
#define I8_A0 4
#define I8_A1 5
#define I8_B0 6
#define I8_B1 7

constexpr int kMaxRows = 16;  // token-planes in one A tile

// Calls of up to this many tokens (batches of decodes and verifies) read the panel's own codes in
// every token tile; longer ones (prefill) first copy each panel's codes as signed bytes, which spares
// every tile the per-token start (-128 · Σ q) but costs a pass over the panel. Two threads streaming
// > 1 GiB of 6,144 × 2,048 panels (docs/benchmarks.md), GB/s of weights, signed copy → own codes:
// 8-bit activations 17 tokens 11.7 → 16.8, 32: 10.2 → 13.6, 64: 7.2 → 7.9, 128: 4.5 → 4.5, 512:
// 1.4 → 1.2; 16-bit 9: 11.8 → 18.9, 16: 10.5 → 14.5, 48: 5.7 → 6.2, 64: 4.6 → 4.5.
constexpr int64_t kStreamTokens = 64;

TileConfig config_for(int rows) {
  TileConfig config;
  for (int t : {I8_C0, I8_C1, I8_C2, I8_C3}) config.tile(t, rows, 64);
  for (int t : {I8_A0, I8_A1}) config.tile(t, rows, kInt8ScaleGroup);
  for (int t : {I8_B0, I8_B1}) config.tile(t, 8, 64);
  return config;
}

// Group g of the panel into C tiles c0 (outputs 0–15) and c1 (16–31) from A tile `a_tile`. B: the
// panel's u8 codes (`tdpbsud`), or with Signed their signed copy in `codes` (`tdpbssd`).
#define I8_PRODUCT(c0, c1, a_tile, g)                                                                   \
  do {                                                                                                  \
    if (prefetch.bytes > 0)                                                                             \
      for (int64_t line = 0; line < kInt8GroupBytes; line += 64)                                        \
        prefetch_line<_MM_HINT_T0>(panel + (g) * kInt8GroupBytes + prefetch.bytes + line, prefetch.requests); \
    const std::byte* block = Signed ? codes + (g) * kInt8ScalesOffset : panel + (g) * kInt8GroupBytes;   \
    DS_TILE_ZERO(c0);                                                                                   \
    DS_TILE_ZERO(c1);                                                                                   \
    DS_TILE_LOAD(a_tile, x + (g) * kInt8ScaleGroup, plane_stride);                                      \
    DS_TILE_LOAD(I8_B0, block, kInt8QuadBytes);                                                         \
    DS_TILE_LOAD(I8_B1, block + 64, kInt8QuadBytes);                                                    \
    if constexpr (Signed) {                                                                             \
      DS_TILE_DPBSSD(c0, a_tile, I8_B0);                                                                \
      DS_TILE_DPBSSD(c1, a_tile, I8_B1);                                                                \
    } else {                                                                                            \
      DS_TILE_DPBSUD(c0, a_tile, I8_B0);                                                                \
      DS_TILE_DPBSUD(c1, a_tile, I8_B1);                                                                \
    }                                                                                                   \
  } while (0)

// Group g's dots, stored at c[half][token-plane][16], into each token's accumulators. Signed: the
// dots of the signed codes, which need no −128 · Σ q start.
template <int M, int P, bool Signed>
inline void finish_group(const Int8Activations& a, const std::byte* panel, int64_t g, const int32_t (*c)[16][16],
                         __m512 (&acc)[M][2]) {
  const int64_t groups = a.groups;
  const std::byte* scales = panel + g * kInt8GroupBytes + kInt8ScalesOffset;
  const __m512 sw[2] = {_mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(scales))),
                        _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(scales + 32)))};
#pragma GCC unroll 16
  for (int r = 0; r < M; ++r) {
    const __m512 sx = _mm512_set1_ps(a.scales[r * groups + g]);
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      __m512i dot = _mm512_load_si512(c[h][r * P]);
      if constexpr (!Signed) dot = _mm512_add_epi32(dot, _mm512_set1_epi32(a.offset_sum[(r * P) * groups + g]));
      if constexpr (P == 2) {  // 256 · dot(hi) + dot(lo): exact in int32
        __m512i lo = _mm512_load_si512(c[h][r * P + 1]);
        if constexpr (!Signed) lo = _mm512_add_epi32(lo, _mm512_set1_epi32(a.offset_sum[(r * P + 1) * groups + g]));
        dot = _mm512_add_epi32(_mm512_slli_epi32(dot, 8), lo);
      }
      acc[r][h] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(sw[h], sx), acc[r][h]);
    }
  }
}

// All M tokens × one 32-output panel, the whole k: two groups in flight (C0/C1 and C2/C3), a group's
// dots finished while the next group's products run.
template <int M, int P, bool Signed>
void panel_tile(const Int8Activations& a, const std::byte* panel, const std::byte* codes, float* y, int64_t ldy,
                int64_t rows, StreamPrefetch prefetch) {
  const int64_t groups = a.groups, plane_stride = groups * kInt8ScaleGroup;
  const int8_t* x = a.q;
  alignas(64) int32_t c[2][2][16][16];  // [group % 2][half][token-plane][output]
  __m512 acc[M][2];
#pragma GCC unroll 16
  for (int r = 0; r < M; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  int64_t g = 0;
  for (; g + 1 < groups; g += 2) {
    I8_PRODUCT(I8_C0, I8_C1, I8_A0, g);
    if (g > 0) finish_group<M, P, Signed>(a, panel, g - 1, c[1], acc);
    DS_TILE_STORE_ROWS(I8_C0, c[0][0]);
    DS_TILE_STORE_ROWS(I8_C1, c[0][1]);
    I8_PRODUCT(I8_C2, I8_C3, I8_A1, g + 1);
    finish_group<M, P, Signed>(a, panel, g, c[0], acc);
    DS_TILE_STORE_ROWS(I8_C2, c[1][0]);
    DS_TILE_STORE_ROWS(I8_C3, c[1][1]);
  }
  if (g > 0) finish_group<M, P, Signed>(a, panel, g - 1, c[1], acc);
  if (g < groups) {  // an odd number of groups
    I8_PRODUCT(I8_C0, I8_C1, I8_A0, g);
    DS_TILE_STORE_ROWS(I8_C0, c[0][0]);
    DS_TILE_STORE_ROWS(I8_C1, c[0][1]);
    finish_group<M, P, Signed>(a, panel, g, c[0], acc);
  }
  const auto mask0 = static_cast<__mmask16>(rows >= 16 ? 0xffff : (1u << rows) - 1);
  const auto mask1 = static_cast<__mmask16>(rows >= 32 ? 0xffff : rows <= 16 ? 0 : (1u << (rows - 16)) - 1);
#pragma GCC unroll 16
  for (int r = 0; r < M; ++r) {
    _mm512_mask_storeu_ps(y + r * ldy, mask0, acc[r][0]);
    _mm512_mask_storeu_ps(y + r * ldy + 16, mask1, acc[r][1]);
  }
}

#undef I8_PRODUCT
#undef I8_C0
#undef I8_C1
#undef I8_C2
#undef I8_C3
#undef I8_A0
#undef I8_A1
#undef I8_B0
#undef I8_B1

using PanelTile = void (*)(const Int8Activations&, const std::byte*, const std::byte*, float*, int64_t, int64_t,
                          StreamPrefetch);
template <int P, bool Signed, int... M>
constexpr auto panel_tiles(std::integer_sequence<int, M...>) {
  return std::array<PanelTile, sizeof...(M)>{panel_tile<M + 1, P, Signed>...};
}
// [token-planes / planes − 1]: of 8- and 16-bit activations, on the panel's codes or signed ones.
constexpr auto kTiles8 = panel_tiles<1, false>(std::make_integer_sequence<int, kMaxRows>());
constexpr auto kTiles16 = panel_tiles<2, false>(std::make_integer_sequence<int, kMaxRows / 2>());
constexpr auto kSignedTiles8 = panel_tiles<1, true>(std::make_integer_sequence<int, kMaxRows>());
constexpr auto kSignedTiles16 = panel_tiles<2, true>(std::make_integer_sequence<int, kMaxRows / 2>());

// A panel's codes as signed bytes (u − 128), group after group (kInt8ScalesOffset bytes each), once
// per panel and token block: the tiles' dots then need no per-token start.
struct alignas(64) CodeLine {
  std::byte bytes[64];
};
const std::byte* signed_codes(const std::byte* panel, int64_t groups, std::vector<CodeLine>& out) {
  constexpr int64_t kLines = kInt8ScalesOffset / 64;
  out.resize(static_cast<size_t>(groups * kLines));
  const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t line = 0; line < kLines; ++line)
      _mm512_store_si512(out[static_cast<size_t>(g * kLines + line)].bytes,
                         _mm512_xor_si512(_mm512_load_si512(panel + g * kInt8GroupBytes + 64 * line), bias));
  return out.front().bytes;
}

// Tokens [t0, t0 + count) of `a` as activations of their own (count · planes ≤ 16 token-planes).
Int8Activations token_rows(const Int8Activations& a, int64_t t0) {
  Int8Activations rows = a;
  rows.q += t0 * a.planes * a.groups * kInt8ScaleGroup;
  rows.scales += t0 * a.groups;
  rows.offset_sum += t0 * a.planes * a.groups;
  return rows;
}

}  // namespace

void matmul_int8_amx(const Int8Activations& a, int64_t m, const TensorView& w, int64_t panel_begin, int64_t panel_end,
                     float* y) {
  if (m < 2) return matmul_int8_avx512(a, m, w, panel_begin, panel_end, y);
  DS_CHECK(w.format == WeightFormatId::int8_panels, "int8 kernel on ", w.name);
  DS_CHECK(a.planes == w.activation_planes, "activations with ", a.planes, " planes for ", w.name);
  const int64_t n = w.shape[0], k = w.shape[1], panel_bytes = int8_panel_bytes(k);
  const PanelTile* tiles = a.planes == 2 ? kTiles16.data() : kTiles8.data();
  const int64_t tile_tokens = kMaxRows / a.planes;
  if (m <= tile_tokens) {  // one token tile: the panels stream from memory once
    const StreamPrefetch prefetch = cpu_tuning().decode_prefetch;
    const TileScope scope(config_for(static_cast<int>(m * a.planes)));
    for (int64_t p = panel_begin; p < panel_end; ++p) {
      const int64_t first_col = p * kInt8PanelRows;
      tiles[m - 1](a, w.data + p * panel_bytes, nullptr, y + first_col, n, std::min(kInt8PanelRows, n - first_col),
                   prefetch);
    }
    return;
  }
  if (m <= kStreamTokens) {  // a few tiles: each panel from memory by the first (prefetched), then from L2
    const StreamPrefetch prefetch = cpu_tuning().decode_prefetch;
    const int64_t block = token_block_tokens(k * a.planes, tile_tokens);
    for_each_token_tile(
        m, k * a.planes, tile_tokens, panel_begin, panel_end, [](int64_t) {},
        [&](int64_t tokens) { return config_for(static_cast<int>(tokens * a.planes)); },
        [&](int64_t p, int64_t t0, int64_t tokens) {
          const int64_t first_col = p * kInt8PanelRows;
          tiles[tokens - 1](token_rows(a, t0), w.data + p * panel_bytes, nullptr, y + t0 * n + first_col, n,
                            std::min(kInt8PanelRows, n - first_col), t0 % block == 0 ? prefetch : StreamPrefetch{});
        });
    return;
  }
  // Prefill: each panel's signed codes read from cache by every token tile of a block.
  const PanelTile* signed_tiles = a.planes == 2 ? kSignedTiles16.data() : kSignedTiles8.data();
  thread_local std::vector<CodeLine> scratch;
  const std::byte* codes = nullptr;
  for_each_token_tile(
      m, k * a.planes, tile_tokens, panel_begin, panel_end,
      [&](int64_t p) { codes = signed_codes(w.data + p * panel_bytes, a.groups, scratch); },
      [&](int64_t tokens) { return config_for(static_cast<int>(tokens * a.planes)); },
      [&](int64_t p, int64_t t0, int64_t tokens) {
        const int64_t first_col = p * kInt8PanelRows;
        signed_tiles[tokens - 1](token_rows(a, t0), w.data + p * panel_bytes, codes, y + t0 * n + first_col, n,
                                 std::min(kInt8PanelRows, n - first_col), StreamPrefetch{});
      });
}

}  // namespace ds::kernels
