// The blocking every matmul kernel shares: rows of x in blocks of 64 (kept hot in L2 while one
// weight tile streams past), weight rows in tiles of up to 4, x rows in tiles of up to 4.
// tile(first_row, rows, first_col, cols) computes one tile of y.
#pragma once

#include <algorithm>
#include <cstdint>

namespace ds::kernels {

inline constexpr int64_t kTileRowBlock = 64;

template <typename TileFn>
inline void for_each_tile(int64_t m, int64_t col_begin, int64_t col_end, TileFn&& tile) {
  for (int64_t r0 = 0; r0 < m; r0 += kTileRowBlock) {
    const int64_t r_end = std::min(m, r0 + kTileRowBlock);
    for (int64_t c = col_begin; c < col_end; c += 4) {
      const int64_t cols = std::min<int64_t>(4, col_end - c);
      for (int64_t r = r0; r < r_end; r += 4) tile(r, std::min<int64_t>(4, r_end - r), c, cols);
    }
  }
}

}  // namespace ds::kernels
