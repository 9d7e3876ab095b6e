// The vision tower's tensors (model.visual.*) bound from a checkpoint. Names and shapes come from
// the one weight table (model/weight_spec.cpp); every problem is reported at once, as text binding does.
#pragma once

#include <vector>

#include "io/checkpoint.h"
#include "io/model_config.h"
#include "io/tensor_view.h"

namespace ds {

struct VisionBlockWeights {
  TensorView norm1_weight, norm1_bias;  // [D]
  TensorView qkv_weight;                // [3D, D]: rows q (all heads) | k | v, head-major
  TensorView qkv_bias;                  // [3D]
  TensorView proj_weight, proj_bias;    // [D, D], [D]
  TensorView norm2_weight, norm2_bias;  // [D]
  TensorView fc1_weight, fc1_bias;      // [I, D], [I]
  TensorView fc2_weight, fc2_bias;      // [D, I], [D]
};

struct VisionWeights {
  TensorView patch_embed;       // [D, C·T·P·P]: the Conv3d kernel (stride = kernel) as a Linear over a pixel_values row
  TensorView patch_embed_bias;  // [D]
  TensorView pos_embed;         // [side², D] learned position table
  std::vector<VisionBlockWeights> blocks;
  TensorView merger_norm_weight, merger_norm_bias;  // [D]
  TensorView merger_fc1_weight, merger_fc1_bias;    // [m²D, m²D], [m²D]
  TensorView merger_fc2_weight, merger_fc2_bias;    // [O, m²D], [O]
};

// Binds model.visual.* of `checkpoint` (marking them taken). Refuses, by name, a config without
// vision_config, a missing tensor, a wrong shape or dtype (BF16, F16 and F32 are read), and a tower
// this engine does not compute: an activation other than gelu_pytorch_tanh, a head size that is not
// a multiple of 4 (the 2-D rotary splits it in quarters), input channels other than 3.
Result<VisionWeights> bind_vision_weights(Checkpoint& checkpoint, const ModelConfig& config);

}  // namespace ds
