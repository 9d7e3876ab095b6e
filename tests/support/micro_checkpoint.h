// Micro checkpoints for tests: valid Qwen3.5 configs with tiny dimensions (vocab 512, hidden 64 or 256),
// written by the real random-checkpoint writer, and a way to rewrite their tensors to break them.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/safetensors_writer.h"
#include "model/random_checkpoint.h"

namespace ds::test {

struct MicroOptions {
  bool nested = true;   // released layout (text_config + vision_config) or flat text-only
  bool tied = true;
  int layers = 4;       // pattern L L L F
  bool block_sized = false;  // rows of whole 256-value blocks (hidden 256, heads of 64), as GGUF's K-quants need
};

nlohmann::ordered_json micro_config_json(const MicroOptions& options);
TokenizerAssets micro_assets();

// Writes a micro checkpoint into `dir` (must not exist or be empty); fails the test on error.
void write_micro_checkpoint(const std::string& dir, const MicroOptions& options, RandomCheckpointOptions writer = {});

// A tensor being rewritten: declaration plus its bytes.
struct EditableTensor {
  TensorDecl decl;
  std::string bytes;
};

// Copies the single-file checkpoint in `src` to `dst` with `edit` applied to its tensor list.
void rewrite_checkpoint(const std::string& src, const std::string& dst,
                        const std::function<void(std::vector<EditableTensor>&)>& edit);

}  // namespace ds::test
