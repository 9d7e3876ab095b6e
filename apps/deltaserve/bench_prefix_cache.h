// `bench --prefix-cache N,...`: time to first token of a prompt whose first N tokens were computed
// before (warm: restored from the prefix cache) against the same prompt computed from scratch
// (cold), through the engine; and what one DeltaNet snapshot costs to take and to restore.
#pragma once

#include <cstdint>

#include "cache/hybrid_cache.h"
#include "engine/engine.h"
#include "util/status.h"

namespace ds::app {

struct PrefixCacheResult {
  int64_t shared_tokens = 0, question_tokens = 0;
  double cold_ttft_s = 0;  // shared prefix + question A, nothing cached
  double warm_ttft_s = 0;  // shared prefix + question B, after A
  int64_t cached_tokens = 0;  // what B found cached
};

// Two requests of `shared_tokens` random tokens + `question_tokens` different ones, one token each.
Result<PrefixCacheResult> run_prefix_cache(Engine& engine, int64_t vocab, int64_t shared_tokens, int64_t question_tokens,
                                           uint64_t seed);

struct SnapshotCost {
  uint64_t bytes = 0;
  double take_s = 0, restore_s = 0;  // best of several copies
};

// Times taking and restoring one snapshot of a DeltaNet state of `geometry`.
SnapshotCost measure_snapshot_cost(const CacheGeometry& geometry, Backend& backend);

}  // namespace ds::app
