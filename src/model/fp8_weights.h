// Block-FP8 checkpoints in binding (kernels/formats/fp8/block_fp8.h). Which tensors are block-FP8
// weights is decided by what the file holds — an F8_E4M3 tensor T [n, k] with a sibling
// T + "_scale_inv" of BF16, F16 or F32 and shape [ceil(n / 128), ceil(k / 128)] — never by
// quantization_config.modules_to_not_convert, whose names loaders have matched wrongly (prefixes of
// other modules, wrapper names a text-only load never sees) and then read codes without scales
// (../shared/docs/quantized-checkpoints.md §1.3).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "io/checkpoint.h"
#include "io/model_config.h"

namespace ds {

struct Fp8Pairing {
  std::map<std::string, TensorView> weights;  // T → its codes as a view of format fp8_blocks, scales attached
  std::vector<std::string> scales;            // the T_scale_inv tensors those took
};

// Pairs every F8_E4M3 tensor of `checkpoint` with its scale. Adds one line per problem to `problems`,
// naming the tensor: an FP8 tensor without a scale, a scale without an FP8 weight, a scale of the wrong
// shape or dtype, an FP8 tensor that is not 2-D, F8_E5M2, or FP8 tensors when config.json has no
// quantization_config.
Fp8Pairing pair_block_fp8(const Checkpoint& checkpoint, const ModelConfig& config, std::vector<std::string>* problems);

}  // namespace ds
