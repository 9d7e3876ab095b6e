// Loading a checkpoint — an HF directory (config.json + safetensors) or a GGUF file / split set
// (model/gguf_checkpoint.h) — into a runnable model: config, mmapped weights, strict binding, and
// one log line per fact a user wants to see (model, layout, dtypes, mode, backend, memory).
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "io/model_config.h"
#include "io/checkpoint.h"
#include "model/qwen35_model.h"
#include "model/weight_arena.h"
#include "util/status.h"

namespace ds {

// native: the checkpoint's dtype (bf16 / f16 / f32); bf16 matmul weights are repacked into panels
// (bf16_repack.h) in fast mode when the backend runs them. mapped: the same values read straight from
// the mapped files (no repacking: quicker start, pages shared with other processes, slower kernels).
// int8: quantised at load to int8 panels; q4_k: to Q4_K panels, the head to Q6_K (quantize.h).
enum class WeightsChoice { native, mapped, int8, q4_k };

struct LoadedModel {
  ModelConfig config;
  std::unique_ptr<Checkpoint> checkpoint;  // owns the mappings (and converted values) the weights point into
  WeightsChoice weights = WeightsChoice::native;
  std::unique_ptr<WeightArena> repacked;  // the matmul weights in their kernels' formats (null: all mapped)
  // The matmul weights' bytes (projections and head) as the checkpoint stores them, and as the model
  // reads them after loading (repacked or quantised): what a decode step streams.
  uint64_t matmul_file_bytes = 0, matmul_bytes = 0;
  std::unique_ptr<Qwen35Model> model;
};

// A path naming a GGUF model: FILE.gguf (or a part of a split set).
bool is_gguf_path(const std::string& path);

// The config of the checkpoint at `path`: DIR/config.json, or a GGUF model's metadata.
Result<ModelConfig> load_checkpoint_config(const std::string& path);

// Opens the checkpoint at `path` (directory or .gguf) with its config.
Result<std::pair<ModelConfig, std::unique_ptr<Checkpoint>>> open_checkpoint(const std::string& path);

Result<LoadedModel> load_model(const std::string& path, Backend& backend, ComputeMode mode,
                               WeightsChoice choice = WeightsChoice::native, int threads = 1);

}  // namespace ds
