// Scheduler: one pass over the running requests (decodes, then prefills), then FCFS admission,
// against a ledger of free blocks and slots; see scheduler.h for the policy.
#include "engine/scheduler.h"

#include <algorithm>

#include "util/check.h"

namespace ds {
namespace {

bool by_id(const Request* a, const Request* b) { return a->id < b->id; }

}  // namespace

Status validate_limits(const SchedulerLimits& limits) {
  if (limits.max_seqs < 1) return Status::errorf("--max-seqs must be at least 1, found ", limits.max_seqs);
  if (limits.max_batch_tokens < limits.max_seqs + kPrefillAlign)
    return Status::errorf("--max-batch-tokens must be at least --max-seqs + ", kPrefillAlign, " (", limits.max_seqs + kPrefillAlign,
                          ") so prefills progress beside a full batch of decodes, found ", limits.max_batch_tokens);
  return {};
}

void Scheduler::add(Request* request) {
  waiting_.insert(std::upper_bound(waiting_.begin(), waiting_.end(), request, by_id), request);
}

void Scheduler::remove(Request* request) {
  if (auto it = std::find(running_.begin(), running_.end(), request); it != running_.end()) running_.erase(it);
  if (auto it = std::find(waiting_.begin(), waiting_.end(), request); it != waiting_.end()) waiting_.erase(it);
}

int64_t Scheduler::prefill_chunk(const Request& r, int64_t budget) {
  const int64_t remaining = r.prefill_stop() - r.num_computed;
  if (remaining <= budget) return remaining;
  return std::max<int64_t>(0, (r.num_computed + budget) / kPrefillAlign * kPrefillAlign - r.num_computed);
}

void Scheduler::preempt(Request* victim, StepPlan& plan, int64_t& free_blocks, int64_t& free_slots) {
  free_blocks += static_cast<int64_t>(victim->cache.blocks.size());
  if (victim->cache.slot >= 0) ++free_slots;
  plan.cache.release.push_back(&victim->cache);
  plan.preempted.push_back(victim);
  victim->computed_at_preemption = victim->num_computed;
  victim->wanted_drafts = 0;
  victim->num_computed = 0;
  victim->prefill_end = 0;
  ++victim->preemptions;
  running_.erase(std::find(running_.begin(), running_.end(), victim));
  add(victim);
}

StepPlan Scheduler::schedule(const HybridCache& cache) {
  StepPlan plan;
  int64_t budget = limits_.max_batch_tokens;
  int64_t free_blocks = cache.free_blocks(), free_slots = cache.free_slots();
  std::vector<const Request*> scheduled;
  auto is_scheduled = [&](const Request* r) { return std::find(scheduled.begin(), scheduled.end(), r) != scheduled.end(); };

  // Makes room for `needed` blocks by preempting the newest running request not scheduled yet.
  // False when only `request` itself is left to give them (the caller then skips or preempts it).
  auto make_room = [&](Request* request, int64_t needed) {
    while (needed > free_blocks) {
      Request* victim = nullptr;
      for (auto it = running_.rbegin(); it != running_.rend(); ++it)
        if (*it != request && !is_scheduled(*it)) {
          victim = *it;
          break;
        }
      if (victim == nullptr) return false;
      preempt(victim, plan, free_blocks, free_slots);
    }
    return true;
  };
  // `hit`: an admission's cached prefix, whose blocks the plan shares before it grows.
  auto take = [&](Request* r, int64_t n, StepKind kind, const PrefixHit& hit = {}) {
    const int64_t held = hit.tokens > 0 ? hit.blocks : static_cast<int64_t>(r->cache.blocks.size());
    const int64_t needed = cache.blocks_for(r->num_computed + n) - held;
    free_blocks -= std::max<int64_t>(0, needed) + hit.unreferenced;
    if (r->cache.slot < 0) --free_slots;
    budget -= n;
    plan.cache.grow.push_back({&r->cache, r->num_computed + n});
    plan.chunks.push_back({r, n, kind});
    plan.tokens += n;
    scheduled.push_back(r);
  };

  // 1. Decodes. Iterate over a snapshot: preemption edits running_.
  const std::vector<Request*> running = running_;
  for (Request* r : running) {
    if (r->prefilling() || std::find(running_.begin(), running_.end(), r) == running_.end()) continue;
    DS_CHECK(r->total() - r->num_computed == 1, "decoding request ", r->id, " has ", r->total() - r->num_computed, " new tokens");
    if (budget < 1) break;
    // The last token and room for its drafts (speculative decoding): as many as the budget leaves room
    // for, and none when their blocks are not free (drafts never preempt anyone).
    r->wanted_drafts = std::min(r->wanted_drafts, budget - 1);
    auto needed_for = [&](int64_t tokens) {
      return cache.blocks_for(r->num_computed + tokens) - static_cast<int64_t>(r->cache.blocks.size());
    };
    if (r->wanted_drafts > 0 && needed_for(1 + r->wanted_drafts) > free_blocks) r->wanted_drafts = 0;
    const int64_t n = 1 + r->wanted_drafts;
    const int64_t needed = needed_for(n);
    if (!make_room(r, needed)) {
      preempt(r, plan, free_blocks, free_slots);
      continue;
    }
    take(r, n, StepKind::decode);
  }
  // 2. Running prefills, oldest first.
  bool blocked = false;
  for (Request* r : std::vector<Request*>(running_)) {
    if (!r->prefilling() || std::find(running_.begin(), running_.end(), r) == running_.end()) continue;
    const int64_t n = prefill_chunk(*r, budget);
    if (n == 0) continue;
    const int64_t needed = cache.blocks_for(r->num_computed + n) - static_cast<int64_t>(r->cache.blocks.size());
    if (!make_room(r, needed)) {
      blocked = true;  // waits for blocks; admitting newer requests now would take them first
      continue;
    }
    take(r, n, StepKind::prefill);
  }
  // 3. Admissions, strictly in order. None after a preemption or a blocked prefill: capacity is short.
  while (!blocked && plan.preempted.empty() && !waiting_.empty() &&
         static_cast<int64_t>(running_.size()) < limits_.max_seqs && free_slots > 0) {
    Request* r = waiting_.front();
    // A hit leaves at least the last token to compute: its logits start the generation.
    const PrefixHit hit = cache.find_prefix(r->keyed_tokens(), r->prefix_keys, r->total() - 1);
    r->prefill_end = r->total();
    r->num_computed = hit.tokens;
    const int64_t n = prefill_chunk(*r, budget);
    if (n == 0 || cache.blocks_for(r->prefill_end) - hit.blocks + hit.unreferenced > free_blocks) {
      r->num_computed = r->prefill_end = 0;
      break;
    }
    waiting_.pop_front();
    running_.insert(std::upper_bound(running_.begin(), running_.end(), r, by_id), r);
    if (hit.tokens > 0) plan.cache.restore.push_back({&r->cache, hit, r->keyed_tokens(), r->prefix_keys});
    plan.admitted.push_back(r);
    take(r, n, StepKind::prefill, hit);
  }
  return plan;
}

}  // namespace ds
