// The int8 weight layout (`--weights int8`): how a quantised [n, k] matmul weight is laid out in
// memory so that the VNNI kernels read it as one sequential stream.
//
// Rows are grouped into panels of kInt8PanelRows (32) consecutive output rows. A panel holds, for each
// group g of kInt8ScaleGroup (32) inputs in order, one block of kInt8GroupBytes (1,088) bytes:
//   bytes [0, 1024):    8 quads j, each [32 rows][4 inputs]: the byte of row i, input g·32 + 4j + b is at
//                       128·j + 4·i + b, stored as q + 128 (u8, q in [−127, 127]): `vpdpbusd` multiplies
//                       unsigned by signed bytes, and the activations are the signed side.
//   bytes [1024, 1088): the 32 rows' scales of group g as fp16 — GGUF Q8_0's own scale type, so its
//                       blocks become panels of the file's size, 8.5 bits per weight (fp32 scales
//                       made 9: 6% more bytes for every decode step to stream).
// so w[row, col] = scale · q. One 64-byte vector of a quad holds 16 rows × 4 inputs: `vpdpbusd` with the
// 4 activation bytes broadcast gives 16 outputs' partial sums in 16 lanes, no horizontal sums. Panels
// follow each other (panel p at p · groups · 1,088 bytes), so a thread's contiguous range of panels is
// one sequential stream. Rows past n (the last panel) and inputs past k (the last group) hold q = 0
// with scale 0. The buffer is 64-byte aligned (aligned vector loads).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "io/tensor_view.h"
#include "util/float16.h"

namespace ds {

// Inputs per scale, of the weights and of the activations. The kernels rely on it (a power of two,
// a multiple of 16). Measured on the HF fixtures (int8_accuracy_test.cpp): mean KL to the native
// weights 0.0004–0.0032 with groups of 32, 0.0005–0.0038 with one scale per row.
inline constexpr int64_t kInt8ScaleGroup = 32;

inline constexpr int64_t kInt8PanelRows = 32;
inline constexpr int64_t kInt8QuadBytes = kInt8PanelRows * 4;                                // 128
inline constexpr int64_t kInt8GroupBytes = kInt8PanelRows * kInt8ScaleGroup + kInt8PanelRows * 2;  // 1,088
inline constexpr int64_t kInt8ScalesOffset = kInt8PanelRows * kInt8ScaleGroup;              // 1,024

inline int64_t int8_groups(int64_t k) { return (k + kInt8ScaleGroup - 1) / kInt8ScaleGroup; }
inline int64_t int8_panels(int64_t n) { return (n + kInt8PanelRows - 1) / kInt8PanelRows; }
inline int64_t int8_panel_bytes(int64_t k) { return int8_groups(k) * kInt8GroupBytes; }
inline int64_t int8_packed_bytes(int64_t n, int64_t k) { return int8_panels(n) * int8_panel_bytes(k); }

// Byte offset of the value of (row, col), and of the scale of (row, group).
inline int64_t int8_value_offset(int64_t k, int64_t row, int64_t col) {
  const int64_t in_group = col % kInt8ScaleGroup;
  return row / kInt8PanelRows * int8_panel_bytes(k) + col / kInt8ScaleGroup * kInt8GroupBytes +
         in_group / 4 * kInt8QuadBytes + row % kInt8PanelRows * 4 + in_group % 4;
}
inline int64_t int8_scale_offset(int64_t k, int64_t row, int64_t group) {
  return row / kInt8PanelRows * int8_panel_bytes(k) + group * kInt8GroupBytes + kInt8ScalesOffset +
         row % kInt8PanelRows * 2;
}

// q of (row, col) in [−127, 127], and the scale of (row, group), of a packed view ([n, k] in view.shape).
inline int32_t int8_weight_q(const TensorView& w, int64_t row, int64_t col) {
  return static_cast<int32_t>(static_cast<uint8_t>(w.data[int8_value_offset(w.shape[1], row, col)])) - 128;
}
inline float int8_weight_scale(const TensorView& w, int64_t row, int64_t group) {
  uint16_t bits;
  std::memcpy(&bits, w.data + int8_scale_offset(w.shape[1], row, group), 2);
  return fp16_to_float(bits);
}

// Writes one row (q [k], scales [groups] as fp16 bits) into a packed buffer of a [n, k] weight. Rows
// in different calls touch disjoint bytes, so threads may pack different rows at once.
inline void int8_pack_row(std::byte* packed, int64_t k, int64_t row, const int8_t* q, const uint16_t* scales) {
  const int64_t groups = int8_groups(k);
  std::byte* base = packed + row / kInt8PanelRows * int8_panel_bytes(k);
  for (int64_t g = 0; g < groups; ++g) {  // == int8_value_offset / int8_scale_offset, hoisted
    std::byte* block = base + g * kInt8GroupBytes;
    const int64_t count = std::min<int64_t>(kInt8ScaleGroup, k - g * kInt8ScaleGroup);
    for (int64_t i = 0; i < count; ++i)
      block[row % kInt8PanelRows * 4 + i / 4 * kInt8QuadBytes + i % 4] =
          static_cast<std::byte>(static_cast<uint8_t>(q[g * kInt8ScaleGroup + i] + 128));
    std::memcpy(block + kInt8ScalesOffset + row % kInt8PanelRows * 2, &scales[g], 2);
  }
}

// Fills a fresh packed buffer with q = 0 and scale 0 everywhere (the padding), before packing rows.
inline void int8_clear_packed(std::byte* packed, int64_t n, int64_t k) {
  const int64_t blocks = int8_panels(n) * int8_groups(k);
  for (int64_t b = 0; b < blocks; ++b) {
    std::memset(packed + b * kInt8GroupBytes, 0x80, static_cast<size_t>(kInt8ScalesOffset));
    std::memset(packed + b * kInt8GroupBytes + kInt8ScalesOffset, 0, static_cast<size_t>(kInt8PanelRows * 2));
  }
}

}  // namespace ds
