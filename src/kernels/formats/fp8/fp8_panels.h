// The layout of FP8 panels (WeightFormatId::fp8_panels): block-FP8 codes and scales packed at load so
// that the AVX-512 kernels stream one byte per weight and widen each 64-byte vector of codes into the
// two bf16 vectors of a bf16 panel pair (kernels/formats/bf16_panels/bf16_panels.h) with table lookups.
//
// Rows are grouped into panels of kFp8PanelRows (32) consecutive output rows, each inside one 128-row
// scale block. A panel is
//   a header: the fp32 scale of each block of 128 inputs, in order (exact copies of the checkpoint's
//             scales), padded to 64 bytes;
//   then per input pair j = (2j, 2j + 1), in order, kFp8PairBytes (64) bytes: the codes of 32 rows × 2
//             inputs. The code of row i, input 2j + b is the bf16 panel's word u = 2i + b, stored at
//             byte 16 · (u % 32 / 8) + 8 · (u / 32) + u % 8: the order in which `vpunpcklbw` /
//             `vpunpckhbw` of the low and high bytes looked up for each code give words 0–31 (rows
//             0–15) and 32–63 (rows 16–31), lane by lane.
// Panels follow each other (panel p at p · fp8_panel_bytes(k)). Rows past n and the input past an odd
// k hold code 0 (+0). The buffer is 64-byte aligned.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/formats/fp8/block_fp8.h"

namespace ds {

inline constexpr int64_t kFp8PanelRows = 32;
inline constexpr int64_t kFp8PairBytes = kFp8PanelRows * 2;  // 64
inline constexpr int64_t kFp8BlockPairs = kFp8Block / 2;     // 64 pairs per scale block
static_assert(kFp8Block % kFp8PanelRows == 0, "a panel lies in one scale block of rows");

inline int64_t fp8_pairs(int64_t k) { return (k + 1) / 2; }
inline int64_t fp8_panels(int64_t n) { return (n + kFp8PanelRows - 1) / kFp8PanelRows; }
inline int64_t fp8_header_bytes(int64_t k) { return (fp8_blocks(k) * 4 + 63) / 64 * 64; }
inline int64_t fp8_panel_bytes(int64_t k) { return fp8_header_bytes(k) + fp8_pairs(k) * kFp8PairBytes; }
inline int64_t fp8_packed_bytes(int64_t n, int64_t k) { return fp8_panels(n) * fp8_panel_bytes(k); }

// Byte of row i (0 .. 31), input b (0, 1) within a pair's 64 bytes.
inline int64_t fp8_pair_position(int64_t i, int64_t b) {
  const int64_t u = 2 * i + b;
  return 16 * (u % 32 / 8) + 8 * (u / 32) + u % 8;
}

// Byte offset of the code of (row, col) in a packed [n, k] weight.
inline int64_t fp8_panel_offset(int64_t k, int64_t row, int64_t col) {
  return row / kFp8PanelRows * fp8_panel_bytes(k) + fp8_header_bytes(k) + col / 2 * kFp8PairBytes +
         fp8_pair_position(row % kFp8PanelRows, col % 2);
}

}  // namespace ds
