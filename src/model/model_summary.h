// ModelSummary: parameters and bytes per part of a checkpoint, and the memory a context needs —
// the figures `deltaserve inspect` shows before anyone runs the model.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "io/model_config.h"
#include "io/checkpoint.h"
#include "model/weight_spec.h"

namespace ds {

struct PartSummary {
  uint64_t tensors = 0;
  uint64_t params = 0;
  uint64_t bytes = 0;
  std::map<DType, uint64_t> dtype_tensors;  // how many tensors of each dtype
};

struct ModelSummary {
  std::map<WeightPart, PartSummary> parts;
  uint64_t total_params = 0;
  uint64_t total_bytes = 0;
  uint64_t text_bytes = 0;  // what the text model reads (all but vision and MTP)
};

// Attributes every tensor of the checkpoint to its part via the weight table.
ModelSummary summarize_checkpoint(const Checkpoint& checkpoint, const ModelConfig& config,
                                  const std::string& text_prefix);

// Memory one sequence of `context` tokens needs beyond the weights, as the cache stores it today:
// attention KV (fp32, post-norm post-RoPE k and v of every full-attention layer) and DeltaNet state
// (fp32 recurrent state [nV, dK, dV] plus the last K-1 fp32 conv inputs [K-1, Cv]) of every linear
// layer. (A bf16 KV cache would halve the first figure.)
struct ContextMemory {
  uint64_t kv_bytes = 0;
  uint64_t state_bytes = 0;
};
ContextMemory context_memory(const TextConfig& config, int64_t context);

}  // namespace ds
