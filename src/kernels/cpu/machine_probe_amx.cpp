// AMX probe loop (compiled for AMX only; called at Isa::amx, after detect_isa's permission request).
#include <cstdint>

#include "kernels/cpu/machine_probe.h"

#include "kernels/cpu/amx_tiles.h"

namespace ds::probe {

// 4 independent C tiles × `iterations` × 16 × 16 × 32 bf16 products × 2 flops, operands resident
// in tiles: what the tile unit can do, not what feeding it from memory allows.
DS_PROBE_LOOP float tdpbf16_loop(int64_t iterations) {
  kernels::TileConfig config;
  for (int t = 0; t < 8; ++t) config.tile(t, kernels::kAmxTileRows, kernels::kAmxTileBytes);
  const kernels::TileScope tiles(config);
  alignas(64) uint16_t operand[16 * 32];
  for (uint16_t& v : operand) v = 0x3c00;  // ~0.0078 in bf16
  alignas(64) float out[16 * 16];
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, operand, 64);
  _tile_loadd(5, operand, 64);
  _tile_loadd(6, operand, 64);
  _tile_loadd(7, operand, 64);
  for (int64_t i = 0; i < iterations; ++i) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, out, 64);
  return out[0];
}

}  // namespace ds::probe
