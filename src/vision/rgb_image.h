// RgbImage: a decoded picture as the vision pipeline takes it — 8-bit sRGB, three channels, no
// alpha, rows top to bottom (what PIL's `Image.convert("RGB")` hands HF's image processor).
#pragma once

#include <cstdint>
#include <vector>

namespace ds {

struct RgbImage {
  int64_t height = 0;
  int64_t width = 0;
  std::vector<uint8_t> pixels;  // [height, width, 3], channel innermost

  uint8_t* row(int64_t y) { return pixels.data() + y * width * 3; }
  const uint8_t* row(int64_t y) const { return pixels.data() + y * width * 3; }
};

}  // namespace ds
