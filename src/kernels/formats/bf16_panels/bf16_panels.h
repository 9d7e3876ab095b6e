// The bf16 weight layout of the AVX-512 BF16, AMX and AVX2 kernels (fast mode): how a [n, k] matmul
// weight is laid out in memory so that one `vdpbf16ps` multiplies 16 output rows by a token's input
// pair (on AVX2: 8 rows, widened to fp32 by one shift or mask), and a thread's range of rows is one
// sequential stream.
//
// Rows are grouped into panels of kBf16PanelRows (32) consecutive output rows. A panel holds, for each
// pair j of inputs (2j, 2j + 1) in order, one block of kBf16PairBytes (128) bytes: [32 rows][2 inputs]
// bf16, the value of row i, input 2j + b at byte 4·i + 2·b of the block. One 64-byte vector of a block
// holds 16 rows × 2 inputs: `vdpbf16ps` with the token's 2 inputs broadcast to every lane adds both
// products into 16 outputs' accumulators, no horizontal sums. Panels follow each other (panel p at
// p · panel_pairs · 128 bytes, panel_pairs = pairs rounded up to 16). Rows past n (the last
// panel), the input past an odd k and the pairs past k up to a multiple of 16 are zero.
//
// A 64-byte vector of a block is also one row of an AMX B tile (16 outputs × 1 pair): 16 blocks
// in a row, read with a 128-byte stride, are the [16 pairs][16 outputs][2] tile of `tdpbf16ps`.
// Padding every panel to whole 16-pair tiles lets the AMX kernel read full tiles and never past
// the weight (real widths are multiples of 32, where the padding is empty).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>


namespace ds {

inline constexpr int64_t kBf16PanelRows = 32;
inline constexpr int64_t kBf16PairBytes = kBf16PanelRows * 4;  // 128

inline constexpr int64_t kBf16PanelPairAlign = 16;  // the pairs of one AMX tile

inline int64_t bf16_pairs(int64_t k) { return (k + 1) / 2; }
inline int64_t bf16_panel_pairs(int64_t k) {
  return (bf16_pairs(k) + kBf16PanelPairAlign - 1) / kBf16PanelPairAlign * kBf16PanelPairAlign;
}
inline int64_t bf16_panels(int64_t n) { return (n + kBf16PanelRows - 1) / kBf16PanelRows; }
inline int64_t bf16_panel_bytes(int64_t k) { return bf16_panel_pairs(k) * kBf16PairBytes; }
inline int64_t bf16_packed_bytes(int64_t n, int64_t k) { return bf16_panels(n) * bf16_panel_bytes(k); }

// Byte offset of the value of (row, col) in a packed [n, k] weight.
inline int64_t bf16_panel_offset(int64_t k, int64_t row, int64_t col) {
  return row / kBf16PanelRows * bf16_panel_bytes(k) + col / 2 * kBf16PairBytes + row % kBf16PanelRows * 4 + col % 2 * 2;
}

// Packs rows [row_begin, row_end) of a row-major bf16 [n, k] weight (bits) into `packed` (bf16_packed_bytes
// of the shape). Whole panels only (row_begin a multiple of 32, row_end one too or n), so threads packing
// different panels touch disjoint bytes; the panels' padding (rows past n, the input past an odd k,
// the pairs up to a multiple of 16) is written as zero.
inline void bf16_pack_panels(const std::byte* source, int64_t n, int64_t k, int64_t row_begin, int64_t row_end,
                             std::byte* packed) {
  const int64_t pairs = bf16_pairs(k), full_pairs = k / 2, panel_bytes = bf16_panel_bytes(k);
  for (int64_t p0 = row_begin; p0 < row_end; p0 += kBf16PanelRows) {
    std::byte* panel = packed + p0 / kBf16PanelRows * panel_bytes;
    std::memset(panel, 0, static_cast<size_t>(panel_bytes));
    for (int64_t i = 0; i < kBf16PanelRows && p0 + i < n; ++i) {
      const std::byte* row = source + (p0 + i) * k * 2;
      std::byte* out = panel + i * 4;
      for (int64_t j = 0; j < full_pairs; ++j) std::memcpy(out + j * kBf16PairBytes, row + j * 4, 4);
      if (pairs > full_pairs) std::memcpy(out + full_pairs * kBf16PairBytes, row + full_pairs * 4, 2);
    }
  }
}

}  // namespace ds
