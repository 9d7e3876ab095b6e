// Helpers for tests that break a GGUF file in place: find a tensor's info record in the bytes, and
// open + bind the changed copy to see the first error it gives.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "model/gguf_checkpoint.h"
#include "model/qwen35_weights.h"
#include "test_util.h"

namespace ds::test {

// Offset just past a tensor's name in its info record (the name is preceded by its u64 length); what
// follows is n_dims (u32), ne (u64 each), type (u32), offset (u64).
inline size_t gguf_tensor_info(const std::string& bytes, const std::string& name) {
  std::string needle(8, '\0');
  const uint64_t length = name.size();
  std::memcpy(needle.data(), &length, 8);
  needle += name;
  const size_t at = bytes.find(needle);
  EXPECT_NE(at, std::string::npos) << name;
  return at + needle.size();
}

// Writes `bytes` to tmp/m.gguf, opens and binds it: the first error, or the weights.
inline Result<Qwen35Weights> open_changed_gguf(const TempDir& tmp, const std::string& bytes) {
  write_file(tmp / "m.gguf", bytes);
  auto checkpoint = GgufCheckpoint::open(tmp / "m.gguf");
  if (!checkpoint.ok()) return checkpoint.status();
  return bind_qwen35_weights(*checkpoint, checkpoint->config(), nullptr);
}

}  // namespace ds::test
