// GGUF, llama.cpp's single-file model container (versions 2 and 3): a header, metadata key-value
// pairs, tensor infos, then the tensor data, each tensor aligned. Parsing is a pure function over
// the file's bytes (the fuzzer drives exactly what loading does) and validates everything the
// file claims before anything is trusted; strings and arrays are views into those bytes, so the
// bytes (the file's mapping) must outlive the GgufFile.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/ggml_types.h"
#include "util/status.h"

namespace ds {

inline constexpr uint32_t kGgufMagic = 0x46554747;    // "GGUF" read as a little-endian uint32
inline constexpr uint32_t kGgufMaxDims = 4;           // GGML_MAX_DIMS
inline constexpr size_t kGgufMaxTensorName = 63;      // GGML_MAX_NAME − 1 (the name and its NUL fit in 64 bytes)
inline constexpr uint64_t kGgufDefaultAlignment = 32; // when general.alignment is absent

// n rounded up to a multiple of alignment (tensor offsets, the data section).
inline uint64_t gguf_align_up(uint64_t n, uint64_t alignment) { return (n + alignment - 1) / alignment * alignment; }

// Metadata value types, numbered as in the file.
enum class GgufType : uint32_t {
  uint8 = 0, int8 = 1, uint16 = 2, int16 = 3, uint32 = 4, int32 = 5, float32 = 6, boolean = 7,
  string = 8, array = 9, uint64 = 10, int64 = 11, float64 = 12,
};
const char* gguf_type_name(GgufType type);
// Bytes of one element of a numeric type; 0 for string and array.
uint64_t gguf_element_size(GgufType type);

// One metadata pair. A scalar is an array of one element of its own type.
struct GgufEntry {
  std::string_view key;
  GgufType type = GgufType::uint8;
  GgufType element_type = GgufType::uint8;   // type itself, or the elements' type for an array
  uint64_t count = 1;                        // elements (1 for a scalar)
  std::span<const std::byte> numbers;        // [count × element size] little-endian, numeric types
  std::vector<std::string_view> strings;     // [count] for strings and arrays of strings

  // Typed reads; the error names the key, the expected type and the type found.
  Result<int64_t> integer() const;           // any integer type (uint64 above 2^63 is an error)
  Result<double> number() const;             // any integer or float type
  Result<bool> boolean() const;
  Result<std::string_view> string() const;
  Result<std::vector<int64_t>> integers() const;  // an array of any integer type
  Result<std::vector<double>> numbers_list() const;  // an array of any numeric type
  Result<std::span<const std::string_view>> string_list() const;  // an array of strings
};

struct GgufTensor {
  std::string_view name;
  std::vector<int64_t> shape;  // ggml order: shape[0] is the innermost, contiguous dimension
  GgmlTypeInfo type;
  uint64_t offset = 0;         // from the start of the data section
  uint64_t bytes = 0;
  int64_t numel = 0;
};

struct GgufFile {
  uint32_t version = 0;
  uint64_t alignment = kGgufDefaultAlignment;  // general.alignment, or GGUF's default
  uint64_t data_offset = 0;    // where the data section starts in the file
  std::vector<GgufEntry> metadata;  // in file order, keys unique
  std::vector<GgufTensor> tensors;  // in file order, names unique, laid out back to back (aligned)

  const GgufEntry* find(std::string_view key) const;
  const GgufTensor* tensor(std::string_view name) const;
  // The entry with this key, or an error naming the missing key.
  Result<const GgufEntry*> require(std::string_view key) const;
};

// Validates the whole container: magic and version (2 or 3; a byte-swapped or version-1 file is
// named as such), every length and count against the bytes left, key and tensor names unique,
// known value and tensor types, no nested arrays, alignment a power of two, tensor shapes (1–4
// dimensions, the innermost a multiple of the type's block) and each tensor exactly where the
// previous one ends (padded to the alignment) and inside the file. `file_name` labels errors.
Result<GgufFile> parse_gguf(std::span<const std::byte> file, const std::string& file_name);

}  // namespace ds
