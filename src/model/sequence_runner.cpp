// SequenceRunner: takes the pool's blocks in order as the sequence grows; one state slot for its life.
#include "model/sequence_runner.h"

namespace ds {

SequenceRunner::SequenceRunner(Qwen35Model& model, int64_t max_positions, int64_t max_call_tokens, KvDtype kv_dtype,
                               int64_t block_size, bool with_mtp)
    : model_(model),
      with_mtp_(with_mtp),
      kv_((max_positions + block_size - 1) / block_size, block_size, std::max<int64_t>(1, model.num_kv_layers(with_mtp)),
          model.config().num_key_value_heads, model.config().head_dim, kv_dtype),
      states_(1, std::max<int64_t>(1, model.num_deltanet_layers()), model.config().conv_dim(),
              model.config().linear_conv_kernel_dim - 1, model.config().linear_num_value_heads,
              model.config().linear_key_head_dim, model.config().linear_value_head_dim),
      workspace_(model.config(), max_call_tokens, with_mtp) {
  states_.reset(kSlot);
}

Status SequenceRunner::cover(int64_t positions) {
  while (static_cast<int64_t>(blocks_.size()) * kv_.block_size() < positions) {
    if (static_cast<int64_t>(blocks_.size()) == kv_.num_blocks())
      return Status::errorf("sequence longer than the ", kv_.num_blocks() * kv_.block_size(), " positions reserved");
    blocks_.push_back(static_cast<int32_t>(blocks_.size()));
  }
  return {};
}

Status SequenceRunner::feed(std::span<const int32_t> tokens, LogitsRows rows, std::vector<float>& logits) {
  std::vector<float> no_hidden;
  return feed(tokens, rows, logits, LogitsRows::none, no_hidden);
}

Status SequenceRunner::feed(std::span<const int32_t> tokens, std::span<const int32_t> positions,
                            std::span<const int32_t> embedding_at, std::span<const float> embedding_rows,
                            LogitsRows rows, std::vector<float>& logits) {
  const auto n = static_cast<int64_t>(tokens.size());
  DS_TRY(cover(position_ + n));
  ForwardBatch batch;
  batch.sequences.push_back(SequenceInput{tokens, position_, blocks_, kSlot, positions, rows});
  batch.sequences.back().embedding_at = embedding_at;
  batch.sequences.back().embedding_rows = embedding_rows;
  logits.resize(static_cast<size_t>(batch.logits_rows() * model_.config().vocab_size));
  DS_TRY(model_.forward(batch, kv_, states_, workspace_, logits.data(), nullptr));
  position_ += n;
  return {};
}

Status SequenceRunner::feed(std::span<const int32_t> tokens, LogitsRows rows, std::vector<float>& logits,
                            LogitsRows hidden_rows, std::vector<float>& hidden) {
  const auto n = static_cast<int64_t>(tokens.size());
  DS_TRY(cover(position_ + n));
  ForwardBatch batch;
  batch.sequences.push_back(SequenceInput{tokens, position_, blocks_, kSlot, {}, rows});
  batch.sequences.back().hidden = hidden_rows;
  logits.resize(static_cast<size_t>(batch.logits_rows() * model_.config().vocab_size));
  hidden.resize(static_cast<size_t>(batch.hidden_rows() * model_.config().hidden_size));
  DS_TRY(model_.forward(batch, kv_, states_, workspace_, logits.data(), hidden.data()));
  position_ += n;
  return {};
}

Status SequenceRunner::mtp(std::span<const float> pair_hidden, std::span<const int32_t> next_tokens, int64_t start_pos,
                           int64_t step, LogitsRows rows, std::vector<float>& logits, std::vector<float>& mtp_hidden) {
  if (!with_mtp_) return Status::error("this SequenceRunner was made without room for the MTP head");
  const auto n = static_cast<int64_t>(next_tokens.size());
  const int64_t H = model_.config().hidden_size;
  if (static_cast<int64_t>(pair_hidden.size()) != n * H)
    return Status::errorf("MTP: ", pair_hidden.size(), " hidden values for ", n, " tokens, expected ", n * H);
  DS_TRY(cover(start_pos + n));
  ForwardBatch batch;
  batch.sequences.push_back(SequenceInput{next_tokens, start_pos, blocks_, kSlot, {}, rows});
  batch.sequences.back().hidden = rows;
  logits.resize(static_cast<size_t>(batch.logits_rows() * model_.mtp_vocab()));
  mtp_hidden.resize(static_cast<size_t>(batch.hidden_rows() * H));
  return model_.mtp_forward(batch, step, pair_hidden.data(), kv_, workspace_, logits.data(), mtp_hidden.data());
}

}  // namespace ds
