// MtpDrafter: the checkpoint's own MTP head as the engine's drafter (docs/mtp.md,
// ../shared/docs/qwen35-mtp.md §1). After every step, one head pass over the rows each sequence
// computed and keeps, paired with the tokens that follow them (its KV stays in sync with what is
// committed; the last row's prediction is the next round's first draft); when the step after verifies,
// k − 1 chained head steps, each fed the previous step's hidden and draft. Both batched over requests.
// Drafts are the head's argmax (through the token map, with one). Rows of a sequence that will not
// draft next are kept back, up to kDeferredRows, and go through the head together later: one pass
// reads the head's weights once for all of them, so a request decoding plainly (adaptive k) pays
// little for keeping the head in sync.
#pragma once

#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "engine/drafter.h"
#include "engine/step_model.h"

namespace ds {

// The tokens the head drafts among (docs/mtp.md "Draft vocabulary"). Without a token map: tokens
// [0, size) — the first of the tokenizer's merge rank, as byte-level BPE numbers its tokens — a view of
// lm_head's leading rows (StepModel::set_draft_vocab); size 0: all. With one (--speculative-token-map,
// ids most frequent first): its first `size` ids (0: all of them), the head's logit i standing for
// token_map[i], over a head gathered from those rows (StepModel::set_draft_tokens).
struct DraftVocab {
  int64_t size = 0;
  std::vector<int32_t> token_map;
};

class MtpDrafter : public Drafter {
 public:
  // Errors when the step model has no MTP head (a checkpoint without mtp.* tensors, or a step model
  // made without it), or a head of other than one layer (every released checkpoint has one), and for
  // a vocabulary the head cannot take (a size past the token map's, or see set_draft_vocab).
  static Result<std::unique_ptr<MtpDrafter>> create(StepModel& model, const DraftVocab& vocab);
  static Result<std::unique_ptr<MtpDrafter>> create(StepModel& model, int64_t draft_vocab = 0) {
    return create(model, DraftVocab{draft_vocab, {}});
  }

  bool reads_hidden() const override { return true; }
  Status computed(std::span<const ComputedRows> rows, HybridCache& cache) override;
  Status propose(std::span<DraftRequest> requests, HybridCache& cache) override;
  void forget(uint64_t request_id) override {
    next_.erase(request_id);
    deferred_.erase(request_id);
  }
  static constexpr int64_t kDeferredRows = 64;

  // Tests and `bench --draft-acceptance` only: called after the head has written a request's drafts (so
  // its cost is paid), may replace them — forced acceptance exercises accepted runs with random weights.
  std::function<void(DraftRequest&)> replace_drafts;

 private:
  explicit MtpDrafter(StepModel& model) : model_(model) {}

  // An internal error when the model's head no longer has the token map's logits (token_of would read
  // past the map).
  Status check_vocab(int64_t logits) const;
  // The token of the head's logit `index`: the token map's entry, or the index itself without a map.
  int32_t token_of(int64_t index) const {
    return token_map_.empty() ? static_cast<int32_t>(index) : token_map_[static_cast<size_t>(index)];
  }

  // The head's prediction after a sequence's last computed row: its argmax (the first draft) and its
  // hidden after mtp.norm [H] (the first chained step's input).
  struct Next {
    int32_t draft = 0;
    std::vector<float> hidden;
  };

  // A sequence's rows not through the head yet: positions start_pos .., the tokens that follow them,
  // the main model's hidden rows [rows, H].
  struct Deferred {
    int64_t start_pos = 0;
    std::vector<int32_t> tokens;
    std::vector<float> hidden;
    std::vector<int32_t> positions;       // [tokens, 3] mRoPE (requests with images); empty: text positions
    std::vector<int32_t> embedding_at;    // rows whose next token's embedding is a merger row
    std::vector<float> embedding_rows;    // [embedding_at.size(), H]
  };

  StepModel& model_;
  std::vector<int32_t> token_map_;  // [draft vocabulary] the token of each head logit; empty: the index
  std::unordered_map<uint64_t, Next> next_;
  std::unordered_map<uint64_t, Deferred> deferred_;
  std::vector<float> pair_;      // [rows, H] the pass's or step's pair_hidden input
  std::vector<float> logits_;    // [rows, vocab]
  std::vector<float> out_;       // [rows, H] mtp_hidden out
  std::vector<float> chain_;     // [requests, H] each request's latest head hidden while chaining
  std::vector<int32_t> chain_positions_;  // [requests, 3] a chained step's mRoPE position
  std::vector<int32_t> tokens_;  // [requests] each chained step's input token
};

}  // namespace ds
