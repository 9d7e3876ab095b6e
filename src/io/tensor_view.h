// TensorView: a typed, shaped window onto bytes of a mapped checkpoint (no copy, no ownership).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/dtype.h"

namespace ds {

// How a matmul weight's bytes are laid out: each value names one format under kernels/formats/,
// which owns its size, packing, reference values and kernels. stored: as in the checkpoint file,
// row-major [n, k] of `dtype` (PyTorch Linear layout). bf16_panels, int8_panels: packed at load
// time for the CPU kernels (kernels/formats/bf16_panels/, kernels/formats/int8_panels/). q8_0: GGUF
// Q8_0 blocks as the file stores them (dtype U8: bytes); q8_0_int8_panels: only a packing route,
// Q8_0 into int8 panels losslessly (kernels/formats/q8_0/). q4_k, q5_k, q6_k, iq4_xs: GGUF
// superblocks as the file stores them (U8); their *_panels: the same bytes rearranged at load for
// the kernels (kernels/formats/kquant/ and one folder per type). fp8_blocks: block-FP8 weights as the
// file stores them (F8_E4M3 [n, k] beside their `weight_scale_inv`: block_scales below); fp8_panels:
// the same codes and scales packed at load for the FP8 kernels (kernels/formats/fp8/).
enum class WeightFormatId : uint8_t {
  stored, bf16_panels, int8_panels, q8_0, q8_0_int8_panels,
  q4_k, q4_k_panels, q5_k, q5_k_panels, q6_k, q6_k_panels, iq4_xs, iq4_xs_panels,
  fp8_blocks, fp8_panels,
};

struct TensorView {
  std::string name;            // full name as stored in the file
  DType dtype = DType::F32;
  std::vector<int64_t> shape;  // row-major, outermost first
  const std::byte* data = nullptr;
  uint64_t nbytes = 0;
  WeightFormatId format = WeightFormatId::stored;
  // For formats whose kernels quantise their activations (int8 panels): 1 = to int8, 2 = to 16 bits
  // (kernels/formats/int8_panels/int8_activations.h), for weights whose outputs feed a long
  // recurrence, where int8 activations cost too much accuracy. Which weights get 2 is model/'s choice.
  int64_t activation_planes = 1;
  // The bytes are memory a checkpoint filled at load (a converted GGUF tensor), not a file mapping:
  // releasing their pages after repacking would lose them (model/weight_arena.h), so they are kept.
  bool owned = false;
  // Block-FP8 weights (fp8_blocks): the checkpoint's `weight_scale_inv`, [ceil(n / 128), ceil(k / 128)]
  // of block_scale_dtype (BF16, F16 or F32), each block's values are multiplied by.
  const std::byte* block_scales = nullptr;
  DType block_scale_dtype = DType::F32;

  uint64_t numel() const {
    uint64_t count = 1;
    for (int64_t dim : shape) count *= static_cast<uint64_t>(dim);
    return count;
  }
  bool empty() const { return data == nullptr; }
};

std::string shape_to_string(const std::vector<int64_t>& shape);  // "[1024, 248320]"

}  // namespace ds
