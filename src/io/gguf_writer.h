// GgufWriter: writes a GGUF file (version 3, what gguf_file.h parses): the header, metadata pairs of
// any value type, the tensor infos, then each tensor's data, aligned. The layout is fixed when the
// file is created, so tensor bytes can be written afterwards in any order, from any thread, in
// pieces (pwrite at known offsets): a 16 GB model is streamed to disk, never held in memory. The
// file is written as PATH.partial and renamed to PATH by close(), once every byte of every tensor
// has been written, so an interrupted run never leaves a file that looks complete.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "io/ggml_types.h"
#include "io/gguf_file.h"
#include "util/status.h"

namespace ds {

// A metadata value as the file stores it: a scalar is an array of one element of its own type.
struct GgufValue {
  GgufType type = GgufType::uint8;
  GgufType element_type = GgufType::uint8;  // type itself, or the elements' type for an array
  uint64_t count = 1;
  std::vector<std::byte> numbers;           // [count × element size] little-endian, numeric types
  std::vector<std::string> strings;         // [count] for strings and arrays of strings
};

// The GGUF value type of a C++ number type (bool included).
template <typename T>
constexpr GgufType gguf_type_of() {
  if constexpr (std::is_same_v<T, bool>) return GgufType::boolean;
  else if constexpr (std::is_same_v<T, uint8_t>) return GgufType::uint8;
  else if constexpr (std::is_same_v<T, int8_t>) return GgufType::int8;
  else if constexpr (std::is_same_v<T, uint16_t>) return GgufType::uint16;
  else if constexpr (std::is_same_v<T, int16_t>) return GgufType::int16;
  else if constexpr (std::is_same_v<T, uint32_t>) return GgufType::uint32;
  else if constexpr (std::is_same_v<T, int32_t>) return GgufType::int32;
  else if constexpr (std::is_same_v<T, uint64_t>) return GgufType::uint64;
  else if constexpr (std::is_same_v<T, int64_t>) return GgufType::int64;
  else if constexpr (std::is_same_v<T, float>) return GgufType::float32;
  else if constexpr (std::is_same_v<T, double>) return GgufType::float64;
  else static_assert(sizeof(T) == 0, "not a GGUF metadata number type");
}

// Metadata pairs in the order they are set (a key set twice keeps its first place, the last value).
class GgufMetadata {
 public:
  void set(const std::string& key, GgufValue value);
  template <typename T>
  void set_number(const std::string& key, T value) {
    set_numbers<T>(key, std::span<const T>(&value, 1), /*array=*/false);
  }
  template <typename T>
  void set_array(const std::string& key, std::span<const T> values) {
    set_numbers<T>(key, values, /*array=*/true);
  }
  void set_string(const std::string& key, std::string value);
  void set_strings(const std::string& key, std::vector<std::string> values);

  const std::vector<std::pair<std::string, GgufValue>>& entries() const { return entries_; }

 private:
  template <typename T>
  void set_numbers(const std::string& key, std::span<const T> values, bool array) {
    GgufValue v;
    v.element_type = gguf_type_of<T>();
    v.type = array ? GgufType::array : v.element_type;
    v.count = values.size();
    v.numbers.resize(values.size() * gguf_element_size(v.element_type));
    for (size_t i = 0; i < values.size(); ++i) {
      if constexpr (std::is_same_v<T, bool>) {
        v.numbers[i] = std::byte{values[i] ? uint8_t{1} : uint8_t{0}};
      } else {
        std::memcpy(v.numbers.data() + i * sizeof(T), &values[i], sizeof(T));  // little-endian hosts only
      }
    }
    set(key, std::move(v));
  }
  std::vector<std::pair<std::string, GgufValue>> entries_;
};

// A tensor to write: its name, shape in ggml order (shape[0] innermost) and ggml type.
struct GgufTensorDecl {
  std::string name;
  std::vector<int64_t> shape;
  GgmlTypeInfo type;
  uint64_t bytes() const;  // its data size
  int64_t rows() const;    // every dimension but the innermost
  uint64_t row_bytes() const { return static_cast<uint64_t>(shape[0] / type.block_size * type.type_size); }
};

// The file's bytes before the data section: header, metadata, tensor infos, padding to `alignment`.
// Errors name a tensor that GGUF cannot hold (name length, dimensions, a row that is not whole blocks)
// or a name or key given twice. A non-default alignment is written as general.alignment.
Result<std::string> gguf_header_bytes(const GgufMetadata& metadata, const std::vector<GgufTensorDecl>& tensors,
                                      uint64_t alignment = kGgufDefaultAlignment);

class GgufWriter {
 public:
  // Creates PATH.partial at the file's full size with the header written; the tensors' data follows.
  static Result<GgufWriter> create(const std::string& path, const GgufMetadata& metadata,
                                   std::vector<GgufTensorDecl> tensors, uint64_t alignment = kGgufDefaultAlignment);

  GgufWriter(GgufWriter&&) noexcept;
  GgufWriter& operator=(GgufWriter&&) noexcept;
  ~GgufWriter();  // an unclosed writer removes PATH.partial

  const std::vector<GgufTensorDecl>& tensors() const { return tensors_; }
  uint64_t file_bytes() const { return file_bytes_; }

  // Writes `bytes` at byte `offset` of tensor `index`'s data. Thread-safe; pieces may come in any
  // order but must not overlap (each byte is written once: close() checks the count).
  Status write(size_t index, uint64_t offset, std::span<const std::byte> bytes);
  // Checks that every tensor is complete, closes and renames PATH.partial to PATH.
  Status close();

 private:
  GgufWriter() = default;
  std::string path_, partial_path_;
  int fd_ = -1;
  std::vector<GgufTensorDecl> tensors_;
  std::vector<uint64_t> offsets_;  // absolute file offset of each tensor's data
  std::unique_ptr<std::atomic<uint64_t>[]> written_;  // bytes written per tensor
  uint64_t file_bytes_ = 0;
};

}  // namespace ds
