// Loading a checkpoint directory into a runnable model: config, mmapped weights, strict binding,
// and one log line per fact a user wants to see (model, layout, dtypes, mode, backend, memory).
#pragma once

#include <memory>
#include <string>

#include "io/model_config.h"
#include "io/safetensors_checkpoint.h"
#include "model/quantize.h"
#include "model/qwen35_model.h"
#include "util/status.h"

namespace ds {

enum class WeightFormat { native, int8 };  // native: as stored (bf16 / f16 / f32)

struct LoadedModel {
  ModelConfig config;
  std::unique_ptr<SafetensorsCheckpoint> checkpoint;  // owns the mappings the weights point into
  std::unique_ptr<QuantizedStore> quantized;          // int8 copies (WeightFormat::int8)
  std::unique_ptr<Qwen35Model> model;
};

Result<LoadedModel> load_model(const std::string& dir, Backend& backend, ComputeMode mode,
                               WeightFormat format = WeightFormat::native, int threads = 1);

}  // namespace ds
