// vLLM's KV cache events (vllm/distributed/kv_events.py) and their wire form: a batch is the
// msgpack array [ts, [event, ...], data_parallel_rank]; each event a map tagged by "type" with the
// fields of vLLM's BlockStored, BlockRemoved and AllBlocksCleared (the form vLLM publishes, which
// llm-d's router and Dynamo decode). Block hashes are u64.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace ds::kv_events {

// Where the blocks live: deltaserve's cache is in CPU memory (llm-d weights tiers by this name).
inline constexpr const char* kMedium = "CPU";

struct BlockStored {
  std::vector<uint64_t> block_hashes;
  std::optional<uint64_t> parent_block_hash;  // the block before the first (none: they start the prompt)
  std::vector<int32_t> token_ids;             // [block_hashes.size() · block_size]
  int64_t block_size = 0;
};
struct BlockRemoved {
  std::vector<uint64_t> block_hashes;
};
struct AllBlocksCleared {};
using KvEvent = std::variant<BlockStored, BlockRemoved, AllBlocksCleared>;

// The msgpack payload of one batch (`timestamp`: seconds since the Unix epoch).
std::string encode_kv_event_batch(double timestamp, std::span<const KvEvent> events, int64_t data_parallel_rank = 0);

}  // namespace ds::kv_events
