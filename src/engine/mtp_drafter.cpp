// MtpDrafter: a head pass over each step's kept rows, then chained head steps for the verifies.
#include "engine/mtp_drafter.h"

#include <algorithm>
#include <cstring>

#include "engine/sampler.h"  // argmax: the head's logit index of the largest value (token_of maps it to a token)

namespace ds {

Result<std::unique_ptr<MtpDrafter>> MtpDrafter::create(StepModel& model, const DraftVocab& vocab) {
  const int64_t layers = model.num_mtp_layers();
  if (layers == 0)
    return Status::error("speculative decoding drafts with the checkpoint's MTP head, and this checkpoint has none "
                         "(no mtp.* tensors): use --speculative-tokens 0");
  // A pass over committed rows fills only step 0's layer; later steps of a deeper head would read
  // KV that nothing wrote.
  if (layers != 1)
    return Status::errorf("the MTP drafter runs heads of one layer (as released); this checkpoint's has ", layers);
  std::unique_ptr<MtpDrafter> drafter(new MtpDrafter(model));
  if (vocab.token_map.empty()) {
    DS_TRY(model.set_draft_vocab(vocab.size));
    return drafter;
  }
  const auto listed = static_cast<int64_t>(vocab.token_map.size());
  if (vocab.size < 0 || vocab.size > listed)
    return Status::errorf("draft vocabulary of ", vocab.size, " tokens: expected 1 .. ", listed,
                          " (the token map's ids), or 0 for all of them");
  const int64_t n = vocab.size > 0 ? vocab.size : listed;
  drafter->token_map_.assign(vocab.token_map.begin(), vocab.token_map.begin() + n);
  DS_TRY(model.set_draft_tokens(drafter->token_map_));
  return drafter;
}

Status MtpDrafter::check_vocab(int64_t logits) const {
  // Another drafter made on the same model since (a test, a bench) may have set another head.
  if (!token_map_.empty() && logits != static_cast<int64_t>(token_map_.size()))
    return Status::internal("the MTP head's draft vocabulary changed under its drafter: ", logits, " logits, ",
                            token_map_.size(), " ids in the drafter's token map");
  return {};
}

Status MtpDrafter::computed(std::span<const ComputedRows> rows, HybridCache& cache) {
  const int64_t H = model_.hidden_size(), V = model_.draft_vocab_size();  // logits columns: the draft vocabulary
  DS_TRY(check_vocab(V));
  const std::span<const float> hidden = model_.hidden_rows();
  // Each sequence's rows join what it kept back; those that predict, or hold enough, go through now.
  std::vector<const ComputedRows*> now;
  int64_t total = 0, predicting = 0;
  for (const ComputedRows& c : rows) {
    const auto n = static_cast<int64_t>(c.next_tokens.size());
    if (c.hidden_row < 0 || (c.hidden_row + n) * H > static_cast<int64_t>(hidden.size()))
      return Status::internal("MTP pass: request ", c.id, " names hidden rows [", c.hidden_row, ", ", c.hidden_row + n,
                              ") of the ", hidden.size() / static_cast<size_t>(H), " the forward returned");
    Deferred& d = deferred_[c.id];
    if (d.start_pos + static_cast<int64_t>(d.tokens.size()) != c.start_pos) d = Deferred{};  // not contiguous: start over
    if (d.tokens.empty()) d.start_pos = c.start_pos;
    const auto held = static_cast<int32_t>(d.tokens.size());
    if (!c.positions.empty() || !d.positions.empty()) {  // mRoPE: text positions where none were given
      for (int64_t i = static_cast<int64_t>(d.positions.size()) / 3; i < held; ++i)
        d.positions.insert(d.positions.end(), 3, static_cast<int32_t>(d.start_pos + i));
      if (c.positions.empty())
        for (int64_t i = 0; i < n; ++i) d.positions.insert(d.positions.end(), 3, static_cast<int32_t>(c.start_pos + i));
      else d.positions.insert(d.positions.end(), c.positions.begin(), c.positions.end());
    }
    for (int32_t at : c.next_embedding_at) d.embedding_at.push_back(held + at);
    d.embedding_rows.insert(d.embedding_rows.end(), c.next_embedding_rows.begin(), c.next_embedding_rows.end());
    d.tokens.insert(d.tokens.end(), c.next_tokens.begin(), c.next_tokens.end());
    d.hidden.insert(d.hidden.end(), hidden.begin() + c.hidden_row * H, hidden.begin() + (c.hidden_row + n) * H);
    if (!c.predicts) next_.erase(c.id);  // no drafts next step: a later pass predicts afresh
    if (!c.predicts && static_cast<int64_t>(d.tokens.size()) < kDeferredRows) continue;
    now.push_back(&c);
    total += static_cast<int64_t>(d.tokens.size());
    predicting += c.predicts;
  }
  if (now.empty()) return {};
  pair_.resize(static_cast<size_t>(total * H));
  logits_.resize(static_cast<size_t>(predicting * V));
  out_.resize(static_cast<size_t>(predicting * H));
  // Row i of a sequence pairs its hidden at start_pos + i with the token after it, and runs there.
  ForwardBatch batch;
  int64_t row = 0;
  for (const ComputedRows* c : now) {
    const Deferred& d = deferred_[c->id];
    std::copy(d.hidden.begin(), d.hidden.end(), pair_.begin() + row * H);
    SequenceInput seq;
    seq.tokens = d.tokens;
    seq.start_pos = d.start_pos;
    seq.positions = d.positions;
    seq.embedding_at = d.embedding_at;
    seq.embedding_rows = d.embedding_rows;
    seq.block_table = c->block_table;
    seq.logits = seq.hidden = c->predicts ? LogitsRows::last : LogitsRows::none;
    batch.sequences.push_back(seq);
    row += static_cast<int64_t>(d.tokens.size());
  }
  const Status passed = model_.mtp_forward(batch, 0, pair_.data(), cache, logits_.data(), out_.data());
  for (const ComputedRows* c : now) deferred_.erase(c->id);
  DS_TRY(passed);
  int64_t out = 0;
  for (const ComputedRows* c : now) {
    if (!c->predicts) continue;
    Next& next = next_[c->id];
    next.draft = token_of(argmax(std::span<const float>(logits_.data() + out * V, static_cast<size_t>(V))));
    next.hidden.assign(out_.begin() + out * H, out_.begin() + (out + 1) * H);
    ++out;
  }
  return {};
}

Status MtpDrafter::propose(std::span<DraftRequest> requests, HybridCache& cache) {
  const int64_t H = model_.hidden_size(), V = model_.draft_vocab_size();  // logits columns: the draft vocabulary
  DS_TRY(check_vocab(V));
  const size_t n = requests.size();
  chain_.resize(n * static_cast<size_t>(H));
  chain_positions_.resize(n * 3);
  tokens_.resize(n);
  int64_t deepest = 0;
  for (size_t i = 0; i < n; ++i) {
    DraftRequest& r = requests[i];
    r.drafts->clear();
    const auto next = next_.find(r.id);
    if (next == next_.end() || r.k < 1) continue;  // no pass has seen it yet: no drafts this round
    r.drafts->push_back(next->second.draft);
    std::copy(next->second.hidden.begin(), next->second.hidden.end(), chain_.begin() + static_cast<int64_t>(i) * H);
    deepest = std::max(deepest, r.k);
  }
  // Step s pairs step s − 1's hidden with its draft d_s at position q + s − 1 (q: the last token's
  // position, where the pass's last row predicted d_1), and predicts d_{s+1}.
  std::vector<size_t> in;
  for (int64_t step = 1; step < deepest; ++step) {
    in.clear();
    for (size_t i = 0; i < n; ++i)
      if (static_cast<int64_t>(requests[i].drafts->size()) == step && requests[i].k > step) in.push_back(i);
    if (in.empty()) break;
    const auto rows = static_cast<int64_t>(in.size());
    pair_.resize(static_cast<size_t>(rows * H));
    logits_.resize(static_cast<size_t>(rows * V));
    out_.resize(static_cast<size_t>(rows * H));
    ForwardBatch batch;
    for (int64_t j = 0; j < rows; ++j) {
      const size_t i = in[static_cast<size_t>(j)];
      const DraftRequest& r = requests[i];
      tokens_[i] = r.drafts->back();
      std::copy_n(chain_.begin() + static_cast<int64_t>(i) * H, H, pair_.begin() + j * H);
      SequenceInput seq;
      seq.tokens = std::span<const int32_t>(&tokens_[i], 1);
      seq.start_pos = static_cast<int64_t>(r.tokens.size()) - 2 + step;
      if (r.rope_delta != 0) {  // a generated token's mRoPE position, as the main model gives it
        std::fill_n(chain_positions_.begin() + static_cast<int64_t>(i) * 3, 3, static_cast<int32_t>(seq.start_pos + r.rope_delta));
        seq.positions = std::span<const int32_t>(chain_positions_).subspan(i * 3, 3);
      }
      seq.block_table = r.block_table;
      seq.logits = seq.hidden = LogitsRows::last;
      batch.sequences.push_back(seq);
    }
    DS_TRY(model_.mtp_forward(batch, step, pair_.data(), cache, logits_.data(), out_.data()));
    for (int64_t j = 0; j < rows; ++j) {
      const size_t i = in[static_cast<size_t>(j)];
      requests[i].drafts->push_back(token_of(argmax(std::span<const float>(logits_.data() + j * V, static_cast<size_t>(V)))));
      std::copy_n(out_.begin() + j * H, H, chain_.begin() + static_cast<int64_t>(i) * H);
    }
  }
  if (replace_drafts)
    for (DraftRequest& r : requests) replace_drafts(r);
  return {};
}

}  // namespace ds
