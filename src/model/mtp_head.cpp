// The MTP head's forward (vLLM qwen3_5_mtp.py Qwen3_5MultiTokenPredictor.forward;
// ../shared/docs/qwen35-mtp.md §1.2): cat(norm_e(Embed[x_{i+1}]), norm_h(h_i)) → fc → one gated-attention
// decoder layer over its own KV → mtp.norm → the shared head.
#include <cstring>

#include "model/qwen35_model.h"

#include "kernels/formats/weight_format.h"
#include "model/gathered_rows.h"

namespace ds {

Status Qwen35Model::mtp_forward(const ForwardBatch& batch, int64_t step, const float* pair_hidden, KvBlockPool& kv,
                                Workspace& ws, float* logits, float* mtp_hidden) {
  if (!weights_.mtp) return Status::error("this checkpoint has no MTP head (no mtp.* tensors): MTP is unavailable");
  DS_TRY(validate(batch, kv, ws, /*uses_kv=*/true));
  const int64_t T = batch.total_tokens(), H = config_.hidden_size;
  if (batch.hidden_rows() > 0 && mtp_hidden == nullptr) return Status::error("the batch asks for hidden rows but gives no buffer");
  if (static_cast<int64_t>(ws.mtp_pair.size()) < T * 2 * H)
    return Status::errorf("the workspace has no MTP buffers for ", T, " rows (make it with MTP)");
  if (step < 0) return Status::errorf("MTP step ", step, " is negative");
  const int64_t kv_layer = mtp_kv_layer(step);
  if (kv.num_layers() <= kv_layer)
    return Status::errorf("the KV pool has ", kv.num_layers(), " layers; the MTP head needs ", num_kv_layers(true));
  const MtpWeights& mtp = *weights_.mtp;
  const float eps = static_cast<float>(config_.rms_norm_eps);

  gather_tokens_and_positions(batch, ws);
  embed(batch, ws, ws.normed.data());  // [T, H] e = Embed[x_{i+1}], or the merger row where x_{i+1} is an image pad
  backend_.rms_norm(ws.normed.data(), T, H, mtp.pre_fc_norm_embedding, eps, ws.mixer_out.data());  // [T, H]
  backend_.rms_norm(pair_hidden, T, H, mtp.pre_fc_norm_hidden, eps, ws.head_in.data());            // [T, H]
  for (int64_t t = 0; t < T; ++t) {  // [T, 2H]: embedding first, as vLLM's torch.cat([embeds, hidden])
    std::memcpy(ws.mtp_pair.data() + t * 2 * H, ws.mixer_out.data() + t * H, sizeof(float) * H);
    std::memcpy(ws.mtp_pair.data() + t * 2 * H + H, ws.head_in.data() + t * H, sizeof(float) * H);
  }
  matmul(ws.mtp_pair.data(), T, mtp.fc, ws.hidden.data());  // [T, H] the layer's residual stream
  // Rows kept back through the head only for its KV (MtpDrafter) need no more of the layer.
  const bool outputs_only = batch.output_rows() < T;
  decoder_layer(mtp.layers[static_cast<size_t>(step % num_mtp_layers())], kv_layer, batch, kv, nullptr, ws, outputs_only);
  norm_and_head(batch, mtp.norm, mtp_head_.empty() ? weights_.lm_head : mtp_head_, ws, logits, mtp_hidden, outputs_only);
  return {};
}

Status Qwen35Model::set_mtp_vocab(int64_t n) {
  const TensorView& head = weights_.lm_head;
  const int64_t vocab = head.shape.at(0);
  if (n == 0 || n == vocab) {
    mtp_head_ = TensorView{};
    mtp_head_memory_.reset();
    return {};
  }
  if (n < 0 || n > vocab) return Status::errorf("draft vocabulary of ", n, " tokens: expected 1 .. ", vocab, " (the vocabulary)");
  const WeightFormat& format = format_of(head);
  if (!format.leading_rows_in_place())
    return Status::errorf("a draft vocabulary needs the head's leading rows as a weight of their own; the head is in ",
                          format.name(), ", which has none (row-major, bf16, int8 and K-quant panels do)");
  if (n % format.panel_rows() != 0)
    return Status::errorf("draft vocabulary of ", n, " tokens: expected a multiple of ", format.panel_rows(),
                          " (the head's ", format.name(), " rows per panel)");
  mtp_head_ = head;
  mtp_head_memory_.reset();
  mtp_head_.shape = {n, head.shape.at(1)};
  mtp_head_.nbytes = format.bytes(n, head.shape.at(1));
  return {};
}

Status Qwen35Model::set_mtp_tokens(std::span<const int32_t> tokens) {
  DS_ASSIGN_OR_RETURN(GatheredWeight gathered, gather_rows(weights_.lm_head, tokens));
  mtp_head_ = gathered.view;
  mtp_head_memory_ = std::move(gathered.memory);
  return {};
}

}  // namespace ds
