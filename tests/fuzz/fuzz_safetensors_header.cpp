// libFuzzer target: safetensors header parsing (what loading runs on every file's first bytes).
// Checks the invariants the loader relies on for every header it accepts.
#include <cstddef>
#include <cstdint>
#include <span>

#include "io/safetensors_header.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  const auto header = ds::parse_safetensors_header(bytes, "fuzz.safetensors");
  if (!header.ok()) return 0;
  const uint64_t data_size = size - header->data_offset;
  uint64_t expected = 0;
  for (const ds::TensorEntry& entry : header->tensors) {
    if (entry.begin != expected || entry.end > data_size) __builtin_trap();
    if (entry.numel() * ds::dtype_size(entry.dtype) != entry.end - entry.begin) __builtin_trap();
    expected = entry.end;
  }
  if (expected != data_size) __builtin_trap();
  return 0;
}
