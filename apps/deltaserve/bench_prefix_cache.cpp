// Prefix-cache bench: one engine; the cold request fills the cache, the warm one shares its prefix.
#include "bench_prefix_cache.h"

#include <algorithm>
#include <chrono>

#include "cache/deltanet_state_cache.h"
#include "cache/prefix_key.h"
#include "util/random.h"

namespace ds::app {
namespace {

using Clock = std::chrono::steady_clock;

// Submits one prompt for one token; its TTFT and the tokens it found cached.
Result<std::pair<double, int64_t>> first_token(Engine& engine, std::vector<int32_t> prompt) {
  SamplingParams params;
  params.max_tokens = 1;
  params.ignore_eos = true;
  const auto start = Clock::now();
  DS_ASSIGN_OR_RETURN(auto stream, engine.submit(std::move(prompt), params));
  double ttft = -1;
  while (auto event = stream->next()) {
    if (ttft < 0 && !event->tokens.empty()) ttft = std::chrono::duration<double>(Clock::now() - start).count();
    if (event->finish && *event->finish == FinishReason::error) return Status::error(event->error);
  }
  if (ttft < 0) return Status::error("the request produced no token");
  return std::make_pair(ttft, stream->cached_tokens());
}

}  // namespace

Result<PrefixCacheResult> run_prefix_cache(Engine& engine, int64_t vocab, int64_t shared_tokens, int64_t question_tokens,
                                           uint64_t seed) {
  Xoshiro256 rng(seed);
  auto random = [&](int64_t n) {
    std::vector<int32_t> ids(static_cast<size_t>(n));
    for (auto& id : ids) id = static_cast<int32_t>(rng.next() % static_cast<uint64_t>(vocab));
    return ids;
  };
  const std::vector<int32_t> shared = random(shared_tokens);
  auto with = [&](const std::vector<int32_t>& question) {
    std::vector<int32_t> prompt = shared;
    prompt.insert(prompt.end(), question.begin(), question.end());
    return prompt;
  };
  PrefixCacheResult r;
  r.shared_tokens = shared_tokens;
  r.question_tokens = question_tokens;
  DS_ASSIGN_OR_RETURN(const auto cold, first_token(engine, with(random(question_tokens))));
  DS_ASSIGN_OR_RETURN(const auto warm, first_token(engine, with(random(question_tokens))));
  r.cold_ttft_s = cold.first;
  r.warm_ttft_s = warm.first;
  r.cached_tokens = warm.second;
  return r;
}

SnapshotCost measure_snapshot_cost(const CacheGeometry& g, Backend& backend) {
  DeltaNetStateCache cache(2, 0, 1, g.deltanet_layers, g.conv_channels, g.conv_history, g.num_v_heads, g.k_dim, g.v_dim);
  const std::vector<int32_t> prefix{1, 2, 3};
  const uint64_t key = prefix_keys(prefix, 0).back();
  const int32_t slot = *cache.allocate(-1, backend);
  SnapshotCost cost;
  cost.bytes = cache.snapshots().snapshot_bytes();
  cost.take_s = cost.restore_s = 1e30;
  cache.take_snapshot(slot, key, prefix, true, 0, backend);  // first touch of the snapshot's pages, not timed
  for (int i = 0; i < 5; ++i) {
    auto start = Clock::now();
    cache.take_snapshot(slot, key ^ static_cast<uint64_t>(i + 1), prefix, true, 0, backend);  // a new key: a real copy
    cost.take_s = std::min(cost.take_s, std::chrono::duration<double>(Clock::now() - start).count());
    const auto found = cache.find_snapshot(key ^ static_cast<uint64_t>(i + 1), prefix);
    start = Clock::now();
    const auto restored = cache.allocate(found.value_or(-1), backend);
    cost.restore_s = std::min(cost.restore_s, std::chrono::duration<double>(Clock::now() - start).count());
    if (restored) cache.release(*restored);
  }
  return cost;
}

}  // namespace ds::app
