// KV event batches as msgpack through nlohmann-json's encoder (already a dependency; it writes
// u64 as msgpack uint 64 and doubles as float 64 unless a float 32 holds them exactly). Maps keep
// vLLM's field order, "type" first, as msgspec writes a tagged struct.
#include "kv_events/kv_event_batch.h"

#include <nlohmann/json.hpp>

namespace ds::kv_events {
namespace {

using Json = nlohmann::ordered_json;

struct ToJson {
  Json operator()(const BlockStored& e) const {
    return Json{{"type", "BlockStored"},
                {"block_hashes", e.block_hashes},
                {"parent_block_hash", e.parent_block_hash ? Json(*e.parent_block_hash) : Json(nullptr)},
                {"token_ids", e.token_ids},
                {"block_size", e.block_size},
                {"lora_id", nullptr},
                {"medium", kMedium},
                {"lora_name", nullptr},
                {"extra_keys", nullptr}};
  }
  Json operator()(const BlockRemoved& e) const {
    return Json{{"type", "BlockRemoved"}, {"block_hashes", e.block_hashes}, {"medium", kMedium}};
  }
  Json operator()(const AllBlocksCleared&) const { return Json{{"type", "AllBlocksCleared"}}; }
};

}  // namespace

std::string encode_kv_event_batch(double timestamp, std::span<const KvEvent> events, int64_t data_parallel_rank) {
  Json list = Json::array();
  for (const KvEvent& event : events) list.push_back(std::visit(ToJson{}, event));
  const std::vector<uint8_t> bytes = Json::to_msgpack(Json::array({timestamp, std::move(list), data_parallel_rank}));
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace ds::kv_events
