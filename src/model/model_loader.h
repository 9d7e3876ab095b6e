// Loading a checkpoint directory into a runnable model: config, mmapped weights, strict binding,
// and one log line per fact a user wants to see (model, layout, dtypes, mode, backend, memory).
#pragma once

#include <memory>
#include <string>

#include "io/model_config.h"
#include "io/safetensors_checkpoint.h"
#include "model/qwen35_model.h"
#include "model/weight_arena.h"
#include "util/status.h"

namespace ds {

// native: the checkpoint's dtype (bf16 / f16 / f32); bf16 matmul weights are repacked into panels
// (bf16_repack.h) in fast mode when the backend runs them. mapped: the same values read straight from
// the mapped files (no repacking: quicker start, pages shared with other processes, slower kernels).
// int8: quantised at load (quantize.h).
enum class WeightsChoice { native, mapped, int8 };

struct LoadedModel {
  ModelConfig config;
  std::unique_ptr<SafetensorsCheckpoint> checkpoint;  // owns the mappings the weights point into
  WeightsChoice weights = WeightsChoice::native;
  std::unique_ptr<WeightArena> repacked;  // bf16 panels or int8 copies of the matmul weights (null: all mapped)
  std::unique_ptr<Qwen35Model> model;
};

Result<LoadedModel> load_model(const std::string& dir, Backend& backend, ComputeMode mode,
                               WeightsChoice choice = WeightsChoice::native, int threads = 1);

}  // namespace ds
