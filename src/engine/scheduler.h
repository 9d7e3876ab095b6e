// Scheduler: decides each engine step — which requests run how many tokens — under a token
// budget (max_batch_tokens) and a cap on running sequences (max_seqs), vLLM-v1 style: every step
// is a list of {request → tokens}, so decode, prefill and chunked prefill are one code path.
//
// Policy, in order each step:
//  1. every running request that is decoding gets its one token (decodes never wait behind a prefill),
//     and room for the drafts speculative decoding wants (1 + k tokens, verified in one call; the
//     drafter writes them once the step's blocks are there);
//  2. running prefills, oldest first, get chunks from what is left of the budget;
//  3. waiting requests are admitted strictly first-come-first-served (the queue's head is never
//     overtaken, so nothing starves) while a sequence slot, the budget and KV blocks for the whole
//     prompt are free. A request starts from the longest cached prefix of its prompt (its blocks
//     and snapshot restored, only the rest charged against the blocks).
// A prefill chunk that does not finish the prompt ends on a 64-token boundary (the DeltaNet
// chunk), so a prompt's results never depend on how it was split; a chunk also ends at each of
// the prompt's snapshot boundaries, so the engine can snapshot the state there. When a running request needs a
// block and none is free, the newest running request not yet scheduled this step is preempted
// (its cache released — what it computed stays cached — and it restarts later from the longest
// cached prefix of its tokens); with none left, the request preempts itself.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "cache/hybrid_cache.h"
#include "engine/request.h"
#include "model/forward_batch.h"

namespace ds {

inline constexpr int64_t kPrefillAlign = kSnapshotGrid;  // DeltaNet chunk length

struct SchedulerLimits {
  int64_t max_batch_tokens = 256;
  int64_t max_seqs = 16;
};

// Checks the limits make sense together (decodes of max_seqs sequences must leave room for a
// 64-token prefill chunk, or prefills could starve).
Status validate_limits(const SchedulerLimits& limits);

struct ScheduledChunk {
  Request* request;
  int64_t num_tokens;  // tokens [num_computed, num_computed + num_tokens) run this step
  StepKind kind;       // prefill (chunked kernel) or decode (recurrent)
  // A speculative verify: the decode of the last token and its drafts.
  bool verifies() const { return kind == StepKind::decode && num_tokens > 1; }
  // Whether it reaches the end of its request's tokens (asked before the step computes it), so its
  // last row has logits to sample; a prefill chunk short of the prompt's end has none.
  bool ends_tokens() const { return request->num_computed + num_tokens == request->total(); }
};

struct StepPlan {
  std::vector<ScheduledChunk> chunks;  // decodes first, then prefills oldest first, then admissions
  std::vector<Request*> preempted;
  std::vector<Request*> admitted;      // num_computed already set to the cached prefix
  CachePlan cache;                     // apply before running the chunks
  int64_t tokens = 0;                  // Σ num_tokens ≤ max_batch_tokens
};

class Scheduler {
 public:
  explicit Scheduler(const SchedulerLimits& limits) : limits_(limits) {}

  void add(Request* request);     // joins the waiting queue
  void remove(Request* request);  // leaves whichever list holds it (the caller releases its cache)
  // Decides one step and moves requests between the lists (admitted → running, preempted →
  // waiting, reset to recompute). The cache changes are in the plan: apply it before running.
  StepPlan schedule(const HybridCache& cache);

  const std::deque<Request*>& waiting() const { return waiting_; }
  const std::vector<Request*>& running() const { return running_; }
  bool idle() const { return waiting_.empty() && running_.empty(); }

 private:
  // Tokens a prefilling request runs with `budget` tokens left (0: none fit before a boundary).
  static int64_t prefill_chunk(const Request& request, int64_t budget);
  void preempt(Request* victim, StepPlan& plan, int64_t& free_blocks, int64_t& free_slots);

  SchedulerLimits limits_;
  std::deque<Request*> waiting_;   // by id (submission order)
  std::vector<Request*> running_;  // by id
};

}  // namespace ds
