// Request: the engine thread's record of one generation — its tokens (prompt, then generated),
// how many of them the cache holds, its cache, sampler and stream. Only the engine thread touches it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "cache/hybrid_cache.h"
#include "engine/adaptive_drafts.h"
#include "engine/request_images.h"
#include "engine/request_stream.h"
#include "engine/sampler.h"
#include "model/deltanet_record.h"

namespace ds {

struct Request {
  Request(uint64_t id, std::vector<int32_t> prompt, const SamplingParams& params, uint64_t seed,
          std::shared_ptr<RequestStream> stream)
      : id(id),
        prompt_len(static_cast<int64_t>(prompt.size())),
        tokens(std::move(prompt)),
        params(params),
        sampler(params, tokens, seed),
        stream(std::move(stream)) {}

  uint64_t id;                 // submission order: FCFS and preemption order follow it
  int64_t prompt_len;
  std::vector<int32_t> tokens;  // [prompt_len + generated]
  SamplingParams params;
  Sampler sampler;
  std::shared_ptr<RequestStream> stream;

  int64_t num_computed = 0;  // leading tokens whose KV and DeltaNet state are in `cache`
  int64_t prefill_end = 0;   // tokens.size() when (re)admitted: tokens before it are prefilled (chunked kernel)
  SequenceCache cache;
  RequestImages images;  // empty for a text-only request
  int64_t preemptions = 0;
  int64_t computed_at_preemption = 0;  // num_computed when last preempted: cached before the release

  // Prefix cache (empty when it is off): keys of tokens[0, p) for p = 0 .. prompt_len (after a
  // preemption, .. total(): it is looked up again with what it generated), and the chunk boundaries
  // where prefill stops to snapshot the DeltaNet state (ascending).
  std::vector<uint64_t> prefix_keys;
  std::vector<int64_t> snapshot_positions;
  int64_t cached_tokens = -1;  // prompt tokens the first admission found cached (-1: not admitted yet)

  // Speculative decoding (docs/mtp.md): how many drafts the next step should verify (the scheduler
  // trims it to the room it finds), the drafts the step verifies after the last token, its tokens
  // [last token, drafts...] and the DeltaNet inputs it records (what a rollback replays; sized at the
  // request's first verify). The verify writes the state into the spare slot (cache.spare).
  int64_t wanted_drafts = 0;
  AdaptiveDrafts adaptive;   // the acceptance its rounds have seen
  int64_t next_drafts = 0;   // the drafts its next round should verify (adaptive k), chosen after each step
  std::vector<int32_t> drafts;
  std::vector<int32_t> verify_tokens;
  DeltaNetRecord record;

  int64_t total() const { return static_cast<int64_t>(tokens.size()); }
  int64_t generated() const { return total() - prompt_len; }
  bool prefilling() const { return num_computed < prefill_end; }
  std::span<const int32_t> prompt() const { return std::span<const int32_t>(tokens).first(static_cast<size_t>(prompt_len)); }
  // The tokens prefix_keys covers: what a prefix-cache lookup matches.
  std::span<const int32_t> keyed_tokens() const {
    return std::span<const int32_t>(tokens).first(prefix_keys.empty() ? 0 : prefix_keys.size() - 1);
  }
  // Where the next prefill call must end at the latest: the next snapshot boundary or the end.
  int64_t prefill_stop() const {
    const auto next = std::upper_bound(snapshot_positions.begin(), snapshot_positions.end(), num_computed);
    return next == snapshot_positions.end() ? prefill_end : std::min(prefill_end, *next);
  }
  bool at_snapshot() const { return std::binary_search(snapshot_positions.begin(), snapshot_positions.end(), num_computed); }
};

}  // namespace ds
