// TensorView: a typed, shaped window onto bytes of a mapped checkpoint (no copy, no ownership).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/dtype.h"

namespace ds {

// Inputs per scale of int8 weights. The kernels rely on it (a power of two, a multiple of 16).
inline constexpr int64_t kInt8ScaleGroup = 32;

// How a 2-D matmul weight's elements sit in memory. row_major: as stored in the checkpoint ([n, k],
// PyTorch Linear). bf16_panels: DType::BF16 repacked at load time into the panel layout of
// kernels/bf16_panels.h (32 rows interleaved by input pairs), which the AVX-512 BF16 kernels stream.
// DType::I8 weights are always in their own panel layout (kernels/int8_panels.h).
enum class WeightLayout : uint8_t { row_major, bf16_panels };

struct TensorView {
  std::string name;            // full name as stored in the file
  DType dtype = DType::F32;
  std::vector<int64_t> shape;  // row-major, outermost first
  const std::byte* data = nullptr;
  uint64_t nbytes = 0;
  // DType::I8 weights are quantised at load time, symmetric per group of `scale_group` inputs of a
  // row, and repacked into the panel layout of kernels/int8_panels.h (values and their scales
  // interleaved, so a thread streams one sequential range); `data` / `nbytes` cover the packed bytes.
  int64_t scale_group = 0;  // kInt8ScaleGroup for weights the kernels run
  // 1: the matmul quantises activations to int8; 2: to 16 bits (kernels/int8_activations.h), for
  // weights whose outputs feed a long recurrence, where int8 activations cost too much accuracy.
  int64_t activation_planes = 1;
  WeightLayout layout = WeightLayout::row_major;

  uint64_t numel() const {
    uint64_t count = 1;
    for (int64_t dim : shape) count *= static_cast<uint64_t>(dim);
    return count;
  }
  bool empty() const { return data == nullptr; }
};

std::string shape_to_string(const std::vector<int64_t>& shape);  // "[1024, 248320]"

}  // namespace ds
