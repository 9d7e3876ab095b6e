// The KV cache's element type for a model: `--kv-cache-dtype auto|bf16|fp32` resolved against the
// model's compute mode and head size. Engine (Qwen35StepModel) and SequenceRunner caches follow the same rule.
#pragma once

#include <string_view>

#include "kernels/backend.h"
#include "model/qwen35_model.h"
#include "util/status.h"

namespace ds {

// auto: bf16 in fast mode (half the bytes, twice the cached context; HF's bf16 run keeps K and V
// in bf16 too), fp32 in f32 mode, the reference mode, which keeps every value fp32. The bf16 cache
// stores keys in dim pairs (backend.h), so a model with an odd head_dim gets fp32.
KvDtype default_kv_dtype(const Qwen35Model& model);
// "auto", "bf16" or "fp32". bf16 with a model computing in f32 mode, or with an odd head_dim, is
// an error that says why.
Result<KvDtype> resolve_kv_dtype(std::string_view choice, const Qwen35Model& model);

}  // namespace ds
