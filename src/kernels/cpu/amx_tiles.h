// AMX tile configuration for the AMX kernels (compiled with -mamx-tile; run only at Isa::amx, after
// detect_isa has obtained the tile permission).
//
// A thread's tile state is its own: each kernel call loads its configuration on the thread that
// runs it and releases the tiles when it returns, so a thread between calls carries no tile state
// (Linux then skips its 8 KiB in context switches).
#pragma once

#include <immintrin.h>

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

}  // namespace ds::kernels
