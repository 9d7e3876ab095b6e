// ScaleMinType::quantize (Q4_K, Q5_K): deltaserve's own quantiser, for `--weights q4_k` and the GGUF
// files it writes. Per group of 32 values an affine grid w ≈ scale · q + low (q in 0..levels, low ≤ 0)
// is fitted by least squares; the superblock's eight scales and eight −low are then quantised to 6 bits
// against d = max scale / 63 and dmin = max(−low) / 63 (fp16), and the codes rounded on that final grid.
// Round to nearest, no importance matrix: llama.cpp's quantiser searches further (make_qkx2_quants)
// and so lands a little closer; docs/gguf.md has the measured difference.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/formats/q4_k/q4_k.h"
#include "kernels/formats/round_even.h"
#include "util/float16.h"

namespace ds {
namespace {

struct Grid {
  float scale = 0.0f, low = 0.0f;
};

float squared_error(const float* w, int levels, const Grid& grid) {
  float error = 0.0f;
  for (int i = 0; i < kKquantGroup; ++i) {
    const float q = round_even(std::clamp((w[i] - grid.low) / grid.scale, 0.0f, static_cast<float>(levels)));
    const float diff = w[i] - (grid.scale * q + grid.low);
    error += diff * diff;
  }
  return error;
}

// Starts from the grid spanning [min(w, 0), max(w)]; alternates rounding the codes and refitting
// scale and low to them (the 2 × 2 normal equations), keeping the best grid seen.
Grid fit_group(const float* w, int levels) {
  float lo = 0.0f, hi = w[0];
  for (int i = 0; i < kKquantGroup; ++i) lo = std::min(lo, w[i]), hi = std::max(hi, w[i]);
  Grid grid{(hi - lo) / static_cast<float>(levels), lo};
  if (!(grid.scale > 0.0f)) return Grid{0.0f, lo};
  Grid best = grid;
  float best_error = squared_error(w, levels, grid);
  for (int iteration = 0; iteration < 4; ++iteration) {
    double sq = 0, sqq = 0, sw = 0, sqw = 0;
    for (int i = 0; i < kKquantGroup; ++i) {
      const double q = round_even(std::clamp((w[i] - grid.low) / grid.scale, 0.0f, static_cast<float>(levels)));
      sq += q, sqq += q * q, sw += w[i], sqw += q * w[i];
    }
    const double det = kKquantGroup * sqq - sq * sq;
    if (det <= 0) break;
    double scale = (kKquantGroup * sqw - sq * sw) / det, low = (sw - scale * sq) / kKquantGroup;
    if (low > 0) low = 0, scale = sqw / sqq;  // the grid must reach down to 0 or below
    if (!(scale > 0)) break;
    grid = Grid{static_cast<float>(scale), static_cast<float>(low)};
    const float error = squared_error(w, levels, grid);
    if (error < best_error) best = grid, best_error = error;
  }
  return best;
}

uint8_t six_bits(float value, float step) {
  return step > 0.0f ? static_cast<uint8_t>(round_even(std::clamp(value / step, 0.0f, 63.0f))) : 0;
}

}  // namespace

void ScaleMinType::quantize(const float* values, std::byte* block) const {
  const int levels = (1 << code_bits()) - 1;
  Grid grids[kGroupsPerSuperblock];
  float max_scale = 0.0f, max_minimum = 0.0f;
  for (int64_t j = 0; j < kGroupsPerSuperblock; ++j) {
    grids[j] = fit_group(values + 32 * j, levels);
    max_scale = std::max(max_scale, grids[j].scale);
    max_minimum = std::max(max_minimum, -grids[j].low);
  }
  const uint16_t d_bits = float_to_fp16(max_scale / 63.0f), dmin_bits = float_to_fp16(max_minimum / 63.0f);
  const float d = fp16_to_float(d_bits), dmin = fp16_to_float(dmin_bits);
  uint8_t sc[kGroupsPerSuperblock], m[kGroupsPerSuperblock];
  uint8_t codes[kSuperblock];
  for (int64_t j = 0; j < kGroupsPerSuperblock; ++j) {
    sc[j] = six_bits(grids[j].scale, d);
    m[j] = six_bits(-grids[j].low, dmin);
    const float scale = d * static_cast<float>(sc[j]), minimum = dmin * static_cast<float>(m[j]);
    for (int64_t i = 32 * j; i < 32 * j + 32; ++i)
      codes[i] = scale > 0.0f ? static_cast<uint8_t>(round_even(std::clamp((values[i] + minimum) / scale, 0.0f,
                                                                          static_cast<float>(levels))))
                              : 0;
  }
  std::memcpy(block, &d_bits, 2);
  std::memcpy(block + 2, &dmin_bits, 2);
  auto* packed = reinterpret_cast<uint8_t*>(block + 4);  // k_scale_min's 12 bytes
  for (int64_t j = 0; j < 4; ++j) {
    packed[j] = static_cast<uint8_t>(sc[j] | (sc[j + 4] >> 4) << 6);
    packed[j + 4] = static_cast<uint8_t>(m[j] | (m[j + 4] >> 4) << 6);
    packed[j + 8] = static_cast<uint8_t>((sc[j + 4] & 15) | (m[j + 4] & 15) << 4);
  }
  write_codes(codes, block);
}

}  // namespace ds
