// Writing .npy files (NumPy format 1.0): float32 arrays for `deltaserve logits --out`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/status.h"

namespace ds {

Status write_npy_f32(const std::string& path, const std::vector<int64_t>& shape, const float* data);

}  // namespace ds
