// KV cache dtype: the default per compute mode, and the checks on an explicit choice.
#include "model/kv_cache_dtype.h"

namespace ds {

KvDtype default_kv_dtype(const Qwen35Model& model) {
  return model.mode() == ComputeMode::fast && model.config().head_dim % 2 == 0 ? KvDtype::bf16 : KvDtype::fp32;
}

Result<KvDtype> resolve_kv_dtype(std::string_view choice, const Qwen35Model& model) {
  if (choice == "auto") return default_kv_dtype(model);
  if (choice == "fp32") return KvDtype::fp32;
  if (choice == "bf16") {
    if (model.config().head_dim % 2 != 0)
      return Status::errorf("--kv-cache-dtype bf16: the bf16 cache keeps keys in pairs of dims, and this model's ",
                            "head_dim is odd (", model.config().head_dim, "); use fp32 or auto");
    if (model.mode() == ComputeMode::f32)
      return Status::error(
          "--kv-cache-dtype bf16: the model computes in f32 mode (--mode f32, or an fp32 checkpoint), the reference "
          "mode that keeps every value fp32; use fp32 or auto, or --mode fast with a bf16/fp16 checkpoint");
    return KvDtype::bf16;
  }
  return Status::errorf("--kv-cache-dtype: expected auto, bf16 or fp32, found \"", choice, "\"");
}

}  // namespace ds
