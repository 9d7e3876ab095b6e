// SequenceRunner: takes the pool's blocks in order as the sequence grows; one state slot for its life.
#include "model/sequence_runner.h"

namespace ds {

SequenceRunner::SequenceRunner(Qwen35Model& model, int64_t max_positions, int64_t max_call_tokens, KvDtype kv_dtype,
                               int64_t block_size)
    : model_(model),
      kv_((max_positions + block_size - 1) / block_size, block_size, std::max<int64_t>(1, model.num_attention_layers()),
          model.config().num_key_value_heads, model.config().head_dim, kv_dtype),
      states_(1, std::max<int64_t>(1, model.num_deltanet_layers()), model.config().conv_dim(),
              model.config().linear_conv_kernel_dim - 1, model.config().linear_num_value_heads,
              model.config().linear_key_head_dim, model.config().linear_value_head_dim),
      workspace_(model.config(), max_call_tokens) {
  states_.reset(kSlot);
}

Status SequenceRunner::feed(std::span<const int32_t> tokens, LogitsRows rows, std::vector<float>& logits) {
  const auto n = static_cast<int64_t>(tokens.size());
  while (static_cast<int64_t>(blocks_.size()) * kv_.block_size() < position_ + n) {
    if (static_cast<int64_t>(blocks_.size()) == kv_.num_blocks())
      return Status::errorf("sequence longer than the ", kv_.num_blocks() * kv_.block_size(), " positions reserved");
    blocks_.push_back(static_cast<int32_t>(blocks_.size()));
  }
  ForwardBatch batch;
  batch.sequences.push_back(SequenceInput{tokens, position_, blocks_, kSlot, {}, rows});
  logits.resize(static_cast<size_t>(batch.logits_rows() * model_.config().vocab_size));
  DS_TRY(model_.forward(batch, kv_, states_, workspace_, logits.data()));
  position_ += n;
  return {};
}

}  // namespace ds
