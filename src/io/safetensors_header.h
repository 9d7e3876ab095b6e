// Parsing and validation of a safetensors file's header (8-byte little-endian length + JSON).
// Pure function over bytes, so the fuzzer drives exactly what loading does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "io/dtype.h"
#include "util/status.h"

namespace ds {

// Headers larger than this are rejected before parsing (same limit as the reference crate).
inline constexpr uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

struct TensorEntry {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;  // row-major, outermost first
  uint64_t begin = 0;          // byte offsets relative to the start of the data section
  uint64_t end = 0;
  uint64_t numel() const;
};

struct SafetensorsHeader {
  uint64_t data_offset = 0;                       // 8 + header length
  std::map<std::string, std::string> metadata;    // "__metadata__" (string -> string)
  std::vector<TensorEntry> tensors;               // sorted by begin offset
};

// Validates everything the file claims: header length within the file and the limit, JSON an
// object of tensor entries, known dtypes, non-negative shapes whose byte count equals the offset
// range, ranges inside the data section, contiguous and non-overlapping (no hidden bytes).
// `file_name` only labels the error messages.
Result<SafetensorsHeader> parse_safetensors_header(std::span<const std::byte> file, const std::string& file_name);

}  // namespace ds
