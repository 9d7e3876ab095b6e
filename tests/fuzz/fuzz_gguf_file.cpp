// libFuzzer target: the GGUF container parser (what `--model x.gguf` runs on the whole mapped file).
// Checks the invariants the loader relies on for every file it accepts.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <unordered_set>

#include "io/gguf_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  const auto gguf = ds::parse_gguf(bytes, "fuzz.gguf");
  if (!gguf.ok()) return 0;
  if (gguf->alignment == 0 || (gguf->alignment & (gguf->alignment - 1)) != 0) __builtin_trap();
  if (gguf->data_offset % gguf->alignment != 0) __builtin_trap();
  std::unordered_set<std::string_view> names;
  uint64_t expected = 0;
  for (const ds::GgufTensor& t : gguf->tensors) {
    if (!names.insert(t.name).second || t.offset != expected) __builtin_trap();
    if (gguf->data_offset + t.offset + t.bytes > size) __builtin_trap();
    if (t.shape.empty() || t.shape.size() > 4 || t.shape[0] % t.type.block_size != 0) __builtin_trap();
    expected = (t.offset + t.bytes + gguf->alignment - 1) / gguf->alignment * gguf->alignment;
  }
  // Every typed read either succeeds or says why; none reads outside the file.
  for (const ds::GgufEntry& e : gguf->metadata) {
    (void)e.integer();
    (void)e.number();
    (void)e.boolean();
    (void)e.string();
    (void)e.integers();
    (void)e.numbers_list();
    (void)e.string_list();
  }
  return 0;
}
