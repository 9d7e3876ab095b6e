// The ggml tensor types a GGUF file may name (llama.cpp's enum ggml_type, numbered as in the file):
// each a block of `block_size` values stored in `type_size` bytes. The container parser knows them
// all, so `inspect` can show any file; which ones the model can compute with is decided by the loader.
#pragma once

#include <cstdint>
#include <optional>

namespace ds {

struct GgmlTypeInfo {
  uint32_t id;
  const char* name;     // as llama.cpp prints it: F32, Q4_K, IQ4_XS, ...
  int64_t block_size;   // values per block
  int64_t type_size;    // bytes per block
};

// The ids of the types the model computes with (a stored element type, or a block type with a weight
// format in kernels/formats/).
inline constexpr uint32_t kGgmlF32 = 0, kGgmlF16 = 1, kGgmlQ8_0 = 8, kGgmlQ4_K = 12, kGgmlQ5_K = 13, kGgmlQ6_K = 14,
                          kGgmlIQ4_XS = 23, kGgmlBF16 = 30;

// The type with this id, or nullopt for an id no ggml release assigns (or one since removed).
std::optional<GgmlTypeInfo> ggml_type_info(uint32_t id);

}  // namespace ds
