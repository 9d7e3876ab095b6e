// PrefixAnnouncer: one event per run of blocks, queued on the engine thread that changed the cache.
#include "kv_events/prefix_announcer.h"

namespace ds::kv_events {

void PrefixAnnouncer::blocks_resumable(std::optional<uint64_t> parent, std::span<const uint64_t> keys,
                                       std::span<const int32_t> tokens) {
  publisher_.publish(BlockStored{{keys.begin(), keys.end()}, parent, {tokens.begin(), tokens.end()}, block_size_});
}

void PrefixAnnouncer::blocks_not_resumable(std::span<const uint64_t> keys) {
  publisher_.publish(BlockRemoved{{keys.begin(), keys.end()}});
}

}  // namespace ds::kv_events
