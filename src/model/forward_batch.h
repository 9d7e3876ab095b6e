// ForwardBatch: one model call over several sequences of different lengths, each with its own
// cache (block table + DeltaNet state slot) and positions, and the logits rows it wants.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace ds {

enum class LogitsRows { none, last, all };

// Which Gated DeltaNet kernel a sequence's tokens take. automatic follows HF: the recurrent form
// only for one token on an existing cache, the chunked form otherwise. The engine names the kind
// per request — prompt tokens always chunked, generated tokens always recurrent — so a sequence's
// results never depend on how the scheduler split its prompt (splits fall on 64-token chunk
// boundaries, where chunked prefill is bit-identical to one call). A decode call may run several
// tokens (a speculative verify: the last sampled token and the drafts): the recurrent kernel runs
// them one after another, as that many one-token calls would.
enum class StepKind { automatic, prefill, decode };

struct DeltaNetRecord;

struct SequenceInput {
  std::span<const int32_t> tokens;           // new tokens of this call
  int64_t start_pos = 0;                     // tokens already in this sequence's cache
  std::span<const int32_t> block_table;      // KV blocks covering start_pos + tokens.size() positions
  int32_t state_slot = 0;                    // DeltaNet state slot
  // mRoPE positions [tokens, 3] (T, H, W); empty: text positions start_pos + i on all three rows.
  std::span<const int32_t> positions;
  LogitsRows logits = LogitsRows::last;
  StepKind kind = StepKind::automatic;
  // Rows whose hidden state after the final norm (what the head reads) the call also returns: the MTP
  // head's input (../shared/docs/qwen35-mtp.md §1.2).
  LogitsRows hidden = LogitsRows::none;
  // Non-null: the call keeps what each DeltaNet layer's state advanced on (deltanet_record.h), so the
  // caller can roll the state back to a prefix of these tokens (Qwen35Model::replay_deltanet).
  DeltaNetRecord* record = nullptr;
  // ≥ 0 (decode calls only): the slot the DeltaNet state after this call is written to, state_slot
  // left as it was — a speculative verify's, so a rollback needs no copy of the state. −1: state_slot.
  int32_t state_out_slot = -1;
  // Rows that stand in for the token embeddings of some of this call's tokens: the vision merger's
  // output at image-pad tokens (docs/vision.md). embedding_at: indices into `tokens`;
  // embedding_rows [embedding_at.size(), hidden].
  std::span<const int32_t> embedding_at{};
  std::span<const float> embedding_rows{};
  int32_t output_state_slot() const { return state_out_slot >= 0 ? state_out_slot : state_slot; }
  bool decodes() const { return kind == StepKind::decode || (kind == StepKind::automatic && tokens.size() == 1 && start_pos > 0); }
  // The first row whose logits or hidden the call returns (tokens.size() when none): the rows from it
  // on are the sequence's output rows, the only ones a forward's last layer needs past its KV.
  int64_t first_output() const { return std::min(first_row(logits), first_row(hidden)); }
  // The first row `rows` asks for (tokens.size() for none).
  int64_t first_row(LogitsRows rows) const {
    const auto n = static_cast<int64_t>(tokens.size());
    return rows == LogitsRows::all ? 0 : rows == LogitsRows::last ? n - 1 : n;
  }
};

struct ForwardBatch {
  std::vector<SequenceInput> sequences;
  int64_t total_tokens() const {
    int64_t total = 0;
    for (const SequenceInput& s : sequences) total += static_cast<int64_t>(s.tokens.size());
    return total;
  }
  int64_t logits_rows() const { return rows_of(&SequenceInput::logits); }
  int64_t hidden_rows() const { return rows_of(&SequenceInput::hidden); }
  int64_t output_rows() const {
    int64_t rows = 0;
    for (const SequenceInput& s : sequences) rows += static_cast<int64_t>(s.tokens.size()) - s.first_output();
    return rows;
  }

 private:
  int64_t rows_of(LogitsRows SequenceInput::*which) const {
    int64_t rows = 0;
    for (const SequenceInput& s : sequences)
      rows += s.*which == LogitsRows::all ? static_cast<int64_t>(s.tokens.size()) : s.*which == LogitsRows::last ? 1 : 0;
    return rows;
  }
};

// Each sequence's output rows of `src` [batch.total_tokens(), width], in order, to the top of `dst`
// [batch.output_rows(), width]. In place (dst == src) too: no row moves down.
template <typename T>
void gather_output_rows(const ForwardBatch& batch, const T* src, T* dst, int64_t width) {
  int64_t row = 0, out = 0;
  for (const SequenceInput& s : batch.sequences) {
    const auto n = static_cast<int64_t>(s.tokens.size()), first = s.first_output();
    if (n > first && dst + out * width != src + (row + first) * width)
      std::memmove(dst + out * width, src + (row + first) * width, sizeof(T) * static_cast<size_t>((n - first) * width));
    out += n - first;
    row += n;
  }
}

}  // namespace ds
