// PrefixAnnouncer: the cache's resumable prefixes (cache/resumable_prefixes.h) as vLLM KV events —
// a run of blocks a prompt can now resume through is a BlockStored, blocks it no longer can a
// BlockRemoved — so a prefix-aware router sends a conversation where its state is held.
#pragma once

#include "cache/resumable_prefixes.h"
#include "kv_events/zmq_event_publisher.h"

namespace ds::kv_events {

class PrefixAnnouncer : public ResumablePrefixObserver {
 public:
  PrefixAnnouncer(ZmqEventPublisher& publisher, int64_t block_size) : publisher_(publisher), block_size_(block_size) {}

  void blocks_resumable(std::optional<uint64_t> parent, std::span<const uint64_t> keys,
                        std::span<const int32_t> tokens) override;
  void blocks_not_resumable(std::span<const uint64_t> keys) override;

 private:
  ZmqEventPublisher& publisher_;
  int64_t block_size_;
};

}  // namespace ds::kv_events
