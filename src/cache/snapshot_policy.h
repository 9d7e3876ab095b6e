// SnapshotPolicy: where a prompt's DeltaNet state is snapshotted while it prefills. Every position
// is a 64-token chunk boundary, the grid prefill chunks always follow, so the state a warm run
// restores is bit for bit the state a cold run computes there, and a hit needs only whole KV blocks.
// The rules (docs/engine.md says why each exists and what it costs):
//  1. the boundary before every message and before its content: the chunk starts at or before each
//     `<|im_start|>` token and the token after its header (`<|im_start|>role\n`), so turn k+1 of a
//     chat hits at turn k's last message whatever the template re-rendered after its header, and
//     recomputes less than a chunk before the first token that differs;
//  2. the end of the prompt: the last boundary before its last token (a prompt sent again, or
//     continued, hits there);
//  3. geometric positions 1K, 2K, 4K, 8K, then every 4K, so a long shared document always has a
//     snapshot within 4K tokens.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace ds {

inline constexpr int64_t kSnapshotGrid = 64;  // the DeltaNet chunk: prefill chunks start on this grid

struct SnapshotPolicy {
  std::vector<int32_t> message_start_tokens;  // rule 1 (Qwen: the id of <|im_start|>); empty: none
  int64_t message_header_tokens = 3;          // <|im_start|>, the role, "\n"

  // Ascending, distinct, each a multiple of kSnapshotGrid in [kSnapshotGrid, prompt.size() − 1].
  std::vector<int64_t> positions(std::span<const int32_t> prompt) const;
};

}  // namespace ds
