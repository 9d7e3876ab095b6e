// Element types of safetensors tensors, named as the format names them ("BF16", "F32", ...).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace ds {

enum class DType { BOOL, U8, I8, U16, I16, F16, BF16, U32, I32, F32, U64, I64, F64, F8_E4M3, F8_E5M2 };

std::optional<DType> dtype_from_name(std::string_view name);  // "BF16" -> BF16, unknown -> nullopt
std::string_view dtype_name(DType dtype);
size_t dtype_size(DType dtype);  // bytes per element

}  // namespace ds
