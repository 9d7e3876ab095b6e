// Drafter: what proposes the tokens a speculative decoding round verifies — up to k tokens to follow a
// running sequence's committed tokens. The engine verifies them in one forward and keeps the longest
// run its own sampling confirms, so a drafter changes speed, never output. Scripted drafters (tests,
// benchmarks) and the checkpoint's MTP head (engine/mtp_drafter.h, docs/mtp.md) implement it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "cache/hybrid_cache.h"
#include "util/status.h"

namespace ds {

// A request the step verifies: the scheduler made room (budget and KV blocks) for `k` drafts.
struct DraftRequest {
  uint64_t id = 0;
  std::span<const int32_t> tokens;       // prompt + generated; the last one sampled, not yet computed
  int64_t k = 0;                         // drafts wanted (at most)
  std::span<const int32_t> block_table;  // KV blocks covering positions [0, tokens.size() + k)
  std::vector<int32_t>* drafts = nullptr;  // out: empty on entry, at most k tokens
  // A generated token at index t sits at mRoPE position t + rope_delta on all three rows (0 without
  // images: text positions).
  int64_t rope_delta = 0;
};

// Rows one sequence's forward computed this step and keeps (a verify's accepted rows): positions
// start_pos .. start_pos + n − 1, each followed by next_tokens[i] (a prompt token or a sampled one).
struct ComputedRows {
  uint64_t id = 0;
  int64_t start_pos = 0;
  std::span<const int32_t> next_tokens;  // [n]
  std::span<const int32_t> block_table;
  int64_t hidden_row = 0;  // the first of its n rows in the step's hidden rows (StepModel::hidden_rows)
  bool predicts = false;   // the next step drafts after its last row
  // Requests with images: the rows' mRoPE positions [n, 3] (empty: text positions start_pos + i), and
  // for the rows i whose next token is an image pad, that pad's merger row, which stands in for the
  // next token's embedding (next_embedding_at: row indices; next_embedding_rows [at.size(), hidden]).
  std::span<const int32_t> positions{};
  std::span<const int32_t> next_embedding_at{};
  std::span<const float> next_embedding_rows{};
};

class Drafter {
 public:
  virtual ~Drafter() = default;
  // True: the engine asks every forward for the main model's hidden rows (SequenceInput::hidden) and
  // reports each step's rows through computed().
  virtual bool reads_hidden() const { return false; }
  // After each step's sampling, the rows of the sequences that go on (finished ones are left out).
  virtual Status computed(std::span<const ComputedRows> rows, HybridCache& cache) {
    (void)rows, (void)cache;
    return {};
  }
  // Writes each request's drafts. Runs on the engine thread after the step's cache plan is applied.
  virtual Status propose(std::span<DraftRequest> requests, HybridCache& cache) = 0;
  // The request has ended or was preempted (its cache released): drop what was kept for it.
  virtual void forget(uint64_t request_id) { (void)request_id; }
};

}  // namespace ds
