// VisionModel: what serving images needs beside the text model — the tower bound from the same
// checkpoint, the checkpoint's preprocessor_config.json and the image-pad token — loaded once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "io/checkpoint.h"
#include "io/model_config.h"
#include "kernels/backend.h"
#include "model/weight_arena.h"
#include "util/status.h"
#include "vision/preprocessor_config.h"
#include "vision/vision_tower.h"
#include "vision/vision_weights.h"

namespace ds {

struct VisionModel {
  VisionConfig config;
  VisionWeights weights;  // views into the checkpoint (which must outlive this)
  PreprocessorConfig preprocessor;
  int32_t image_token_id = 0;
  int64_t parameters = 0;  // the tower's and merger's, as stored
  uint64_t bytes = 0;
  std::unique_ptr<WeightArena> packed;  // the matmul weights in their kernels' formats (null: as stored)
  std::unique_ptr<VisionTower> tower;  // reads config and weights above: a VisionModel never moves

  int64_t merge_size() const { return config.spatial_merge_size; }
};

// Binds model.visual.* of `checkpoint` and reads `dir`/preprocessor_config.json. Refuses a text-only
// config (no vision_config) by name; logs the tower it bound (parameters, bytes).
Result<std::unique_ptr<VisionModel>> load_vision_model(Checkpoint& checkpoint, const ModelConfig& config,
                                                       const std::string& dir);

// Packs the tower's matmul weights into the formats `backend` runs fastest (vision_packing.h; bf16
// panels in fast mode on AVX-512 BF16), logging what moved. The tower must run with the same
// round_input_bf16 afterwards (a backend runs any format, the reference element by element).
void pack_vision_model(VisionModel& model, const Backend& backend, bool round_input_bf16, int threads);

}  // namespace ds
