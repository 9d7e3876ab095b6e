// KV cache dtype: the default per compute mode, and the checks on an explicit choice.
#include "model/kv_cache_dtype.h"

namespace ds {

KvDtype default_kv_dtype(ComputeMode mode) { return mode == ComputeMode::fast ? KvDtype::bf16 : KvDtype::fp32; }

Result<KvDtype> resolve_kv_dtype(std::string_view choice, ComputeMode mode) {
  if (choice == "auto") return default_kv_dtype(mode);
  if (choice == "fp32") return KvDtype::fp32;
  if (choice == "bf16") {
    if (mode == ComputeMode::f32)
      return Status::error(
          "--kv-cache-dtype bf16: the model computes in f32 mode (--mode f32, or an fp32 checkpoint), the reference "
          "mode that keeps every value fp32; use fp32 or auto, or --mode fast with a bf16/fp16 checkpoint");
    return KvDtype::bf16;
  }
  return Status::errorf("--kv-cache-dtype: expected auto, bf16 or fp32, found \"", choice, "\"");
}

}  // namespace ds
