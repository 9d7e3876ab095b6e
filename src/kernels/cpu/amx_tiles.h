// AMX tile configuration for the AMX kernels (compiled with -mamx-tile; run only at Isa::amx, after
// detect_isa has obtained the tile permission).
//
// A thread's tile state is its own: each kernel call loads its configuration on the thread that
// runs it and releases the tiles when it returns, so a thread between calls carries no tile state
// (Linux then skips its 8 KiB in context switches).
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

// GCC's tile intrinsics are macros that paste their tile operands into the assembly text, so a tile
// must be a literal number by then: these wrappers let kernels name tiles with macros (expanded
// before the paste). Tile operands cannot be variables or template parameters.
#define DS_TILE_ZERO(t) _tile_zero(t)
#define DS_TILE_LOAD(t, base, stride) _tile_loadd(t, base, stride)
#define DS_TILE_STORE(t, base, stride) _tile_stored(t, base, stride)
// Stores tile t into `buffer`, a [16][16] 4-byte array (rows 64 bytes apart). GCC's _tile_stored
// clobbers all memory, which keeps every accumulator of the surrounding loop in memory; this one
// names the bytes it writes, so vector registers survive it.
#define DS_TILE_STORE_ROWS(t, buffer) DS_TILE_STORE_ROWS_(t, buffer)
#define DS_TILE_STORE_ROWS_(t, buffer)                                                                  \
  __asm__ volatile("tilestored %%tmm" #t ", (%1,%2,1)"                                                  \
                   : "=m"(*reinterpret_cast<char(*)[1024]>(buffer))                                     \
                   : "r"(static_cast<void*>(buffer)), "r"(64L))
#define DS_TILE_DPBF16PS(c, a, b) _tile_dpbf16ps(c, a, b)
#define DS_TILE_DPBSUD(c, a, b) _tile_dpbsud(c, a, b)
#define DS_TILE_DPBSSD(c, a, b) _tile_dpbssd(c, a, b)

namespace ds::kernels {

inline constexpr int kAmxTileRows = 16;   // rows of a tile, at most
inline constexpr int kAmxTileBytes = 64;  // bytes of a tile row, at most

// The 64-byte operand of `ldtilecfg`, palette 1: 8 tiles of up to 16 rows × 64 bytes.
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t bytes_per_row[16] = {};
  uint8_t rows[16] = {};

  TileConfig& tile(int index, int tile_rows, int row_bytes) {
    rows[index] = static_cast<uint8_t>(tile_rows);
    bytes_per_row[index] = static_cast<uint16_t>(row_bytes);
    return *this;
  }
};
static_assert(sizeof(TileConfig) == 64);

// Loads `config` for the scope and releases the tiles at its end.
class TileScope {
 public:
  // GCC's `ldtilecfg` builtin does not tell the compiler it reads the config, which then may drop
  // or sink the config's stores (seen: an inlined config_for whose row widths were never written,
  // so `ldtilecfg` faulted); the empty asm takes the config as a memory input first.
  explicit TileScope(const TileConfig& config) {
    __asm__ volatile("" : : "m"(config));
    _tile_loadconfig(&config);
  }
  ~TileScope() { _tile_release(); }
  TileScope(const TileScope&) = delete;
  TileScope& operator=(const TileScope&) = delete;
};

// Tokens a block of for_each_token_tile holds: a block's first tile (t0 a multiple of it) is the one
// that reads each panel from memory.
inline int64_t token_block_tokens(int64_t token_bytes, int64_t tile_tokens) {
  return std::max(tile_tokens, (int64_t{1} << 20) / token_bytes / tile_tokens * tile_tokens);
}

// The blocking of the AMX-INT8 kernels past one token tile (int8 panels, K-quant panels): tokens in
// blocks whose activations (token_bytes each) fill about 1 MiB, so they stay in L2 while the thread's
// panels pass, and per block each panel once — prepare(p) makes its codes ready for the tiles (a
// scratch copy, or nothing), then tile(p, t0, tokens) runs the block's tiles of tile_tokens tokens
// under config(tile_tokens) and its last, shorter tile under config(tokens). Each weight byte comes
// from memory once a block.
template <class Prepare, class Config, class Tile>
void for_each_token_tile(int64_t m, int64_t token_bytes, int64_t tile_tokens, int64_t panel_begin, int64_t panel_end,
                         Prepare&& prepare, Config&& config, Tile&& tile) {
  const int64_t block = token_block_tokens(token_bytes, tile_tokens);
  for (int64_t b0 = 0; b0 < m; b0 += block) {
    const int64_t b_end = std::min(m, b0 + block), full_end = b0 + (b_end - b0) / tile_tokens * tile_tokens;
    for (int64_t p = panel_begin; p < panel_end; ++p) {
      prepare(p);
      // GCC's tile loads do not say they read memory: prepare's stores must be done before them.
      __asm__ volatile("" ::: "memory");
      {
        const TileScope scope(config(tile_tokens));
        for (int64_t t = b0; t < full_end; t += tile_tokens) tile(p, t, tile_tokens);
      }
      if (full_end < b_end) {  // the block's last tokens, fewer than a tile
        const TileScope scope(config(b_end - full_end));
        tile(p, full_end, b_end - full_end);
      }
    }
  }
}

}  // namespace ds::kernels
