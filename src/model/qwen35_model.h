// Qwen35Model: the hybrid text model's forward (HF Qwen3_5TextModel + lm_head), written once
// against the Backend op interface. Stateless apart from the weights: every call gets the batch,
// the caches and a workspace.
#pragma once

#include <algorithm>
#include <initializer_list>
#include <memory>
#include <span>
#include <vector>

#include "cache/deltanet_state_slots.h"
#include "cache/kv_block_pool.h"
#include "io/model_config.h"
#include "kernels/backend.h"
#include "model/forward_batch.h"
#include "model/qwen35_weights.h"
#include "model/rope_angles.h"
#include "model/weight_arena.h"
#include "model/workspace.h"
#include "util/status.h"

namespace ds {

// f32: activations fp32 everywhere (reference mode). fast: matmul inputs rounded to bf16 with fp32
// accumulation, as HF in bf16 and AVX-512 BF16 compute. fp32 checkpoints always compute in f32.
enum class ComputeMode { f32, fast };

class Qwen35Model {
 public:
  Qwen35Model(const ModelConfig& config, Qwen35Weights weights, Backend& backend, ComputeMode mode);
  // The mode a model computes in: fp32 checkpoints (fp32 embeddings) always compute in fp32.
  static ComputeMode effective_mode(ComputeMode requested, const Qwen35Weights& weights);

  const Qwen35Weights& weights() const { return weights_; }
  const TextConfig& config() const { return config_; }
  Backend& backend() { return backend_; }
  ComputeMode mode() const { return mode_; }
  int64_t num_attention_layers() const { return config_.num_layers_of(LayerType::full_attention); }
  int64_t num_deltanet_layers() const { return config_.num_layers_of(LayerType::linear_attention); }

  // Runs the batch; writes logits [batch.logits_rows(), vocab] and, where sequences ask for them,
  // hidden rows after the final norm [batch.hidden_rows(), H], both in batch order. Token ids, block
  // tables and sizes are checked (they come from requests): a bad batch is an error, not a crash.
  Status forward(const ForwardBatch& batch, KvBlockPool& kv, DeltaNetStateSlots& states, Workspace& ws, float* logits,
                 float* hidden = nullptr);

  // The MTP head (vLLM Qwen3_5MultiTokenPredictor; ../shared/docs/qwen35-mtp.md §1.2), bound when the
  // checkpoint holds mtp.*. Its attention layers keep their K/V in `kv` after the main model's
  // attention layers (mtp_kv_layer), addressed by the same block tables and positions.
  bool has_mtp() const { return weights_.mtp.has_value(); }
  int64_t num_mtp_layers() const { return has_mtp() ? static_cast<int64_t>(weights_.mtp->layers.size()) : 0; }
  // KV pool layers a model needs: its attention layers, and with the MTP head the head's layers too.
  int64_t num_kv_layers(bool with_mtp) const { return num_attention_layers() + (with_mtp ? num_mtp_layers() : 0); }
  // The pool layer of the MTP layer that draft step `step` runs (vLLM: layers[step % num_mtp_layers]).
  int64_t mtp_kv_layer(int64_t step) const { return num_attention_layers() + step % std::max<int64_t>(1, num_mtp_layers()); }

  // One MTP pass: per sequence, row i pairs `pair_hidden` row i — the main model's hidden after the
  // final norm at position start_pos + i, or for chained drafts the previous MTP hidden after mtp.norm —
  // with tokens[i], the token at the next position, and runs at position start_pos + i (its K/V land
  // there). Writes logits [batch.logits_rows(), vocab] (the prediction for the position after the
  // token) and MTP hidden rows after mtp.norm [batch.hidden_rows(), H] (the next chained step's input).
  // pair_hidden: [batch.total_tokens(), H]; must not be a workspace buffer. Needs a workspace made
  // with MTP buffers and a pool with num_kv_layers(true) layers.
  Status mtp_forward(const ForwardBatch& batch, int64_t step, const float* pair_hidden, KvBlockPool& kv, Workspace& ws,
                     float* logits, float* mtp_hidden = nullptr);
  // A draft vocabulary: mtp_forward's logits cover tokens [0, n) only — the head reads the first n rows
  // of lm_head instead of all (speculative decoding's drafts; ../shared/docs/qwen35-mtp.md §4). n = 0:
  // the whole vocabulary again. Errors: n outside (0, vocab], not a multiple of the head weight's panel
  // rows, or a head format whose leading rows are not a weight of their own (only row-major, bf16 and
  // int8 panels are).
  Status set_mtp_vocab(int64_t n);
  // A draft vocabulary in a token map's order (--speculative-token-map): mtp_forward's logit i is token
  // tokens[i]. The head reads its own weight of those lm_head rows, gathered here in lm_head's format
  // (model/gathered_rows.h: memory on top of lm_head's, mtp_head_bytes()); any count of tokens, no
  // panel multiple. Errors: no tokens, an id outside [0, vocab), a head format without gathering.
  // set_mtp_vocab drops the gathered head.
  Status set_mtp_tokens(std::span<const int32_t> tokens);
  int64_t mtp_vocab() const { return mtp_head_.shape.empty() ? config_.vocab_size : mtp_head_.shape[0]; }
  // Weight bytes of one MTP step (fc, its layer, its lm_head rows) ÷ those of one decode step (every
  // layer's matmuls and lm_head); 0 without a head.
  double mtp_step_weight_share();
  // The bytes the MTP head's own gathered weight takes (0: it reads lm_head, or its leading rows).
  uint64_t mtp_head_bytes() const { return mtp_head_memory_ ? mtp_head_.nbytes : 0; }

  // Rolls a sequence's DeltaNet state to the end of the first `rows` rows of a recorded decode call
  // (SequenceInput::record). The caller has put the state from before that call back into `slot`;
  // this reruns the conv and the recurrent kernel over the recorded inputs — the operations that call
  // made for those rows, in the same order — so the state (recurrent and conv window) equals, bit for
  // bit, what a decode call of just those rows leaves. Attention KV needs no replay: entries past the
  // kept length are overwritten by the next call.
  Status replay_deltanet(const DeltaNetRecord& record, int64_t rows, DeltaNetStateSlots& states, int32_t slot,
                         Workspace& ws);

 private:
  // uses_kv: the call reads the sequences' block tables (they must cover every position).
  Status validate(const ForwardBatch& batch, const KvBlockPool& kv, const Workspace& ws, bool uses_kv) const;
  // Token ids and positions of all sequences into ws.tokens / ws.positions, RoPE angles for them.
  void gather_tokens_and_positions(const ForwardBatch& batch, Workspace& ws);
  // out [T, H]: the embeddings of ws.tokens (gathered first), with each sequence's embedding_rows at
  // its embedding_at tokens.
  void embed(const ForwardBatch& batch, const Workspace& ws, float* out);
  // Pre-norm mixer + residual, pre-norm MLP + residual on ws.hidden. outputs_only (a forward's last
  // layer where fewer rows are read after it than it has: a prefill chunk, the MTP head's pass over
  // rows kept back): the mixer's KV or DeltaNet state still takes every row, the rest of the layer only
  // the output rows (SequenceInput::first_output), left compacted at the top of ws.hidden
  // [batch.output_rows(), H]. Per row the same arithmetic, so the same bits, as computing every row.
  void decoder_layer(const DecoderLayerWeights& layer, int64_t cache_layer, const ForwardBatch& batch, KvBlockPool& kv,
                     DeltaNetStateSlots* states, Workspace& ws, bool outputs_only = false);
  // `final_norm` over the rows that want logits or hidden (from ws.hidden; compacted: the top
  // batch.output_rows() rows are those), hidden rows out, head on the logits rows.
  void norm_and_head(const ForwardBatch& batch, const TensorView& final_norm, const TensorView& head, Workspace& ws,
                     float* logits, float* hidden, bool compacted = false);
  // outputs_only: K and V of every row into the cache; queries, attention, gate and o_proj for the
  // output rows only (ws.mixer_out [batch.output_rows(), H]).
  void attention_layer(const DecoderLayerWeights& layer, int64_t kv_layer, const ForwardBatch& batch, KvBlockPool& kv,
                       Workspace& ws, bool outputs_only = false);
  void deltanet_layer(const DecoderLayerWeights& layer, int64_t state_layer, const ForwardBatch& batch,
                      DeltaNetStateSlots& states, Workspace& ws);
  void mlp(const MlpWeights& mlp, int64_t tokens, Workspace& ws);
  void matmul(const float* x, int64_t rows, const TensorView& w, float* y);
  // Projections that share their input, in one backend call (Backend::matmuls).
  void matmuls(const float* x, int64_t rows, std::initializer_list<Backend::MatmulOutput> outputs);

  TextConfig config_;
  Qwen35Weights weights_;
  Backend& backend_;
  ComputeMode mode_;
  RopeTable rope_;
  std::vector<int64_t> cache_index_;  // layer -> index among its kind (kv layer or state layer)
  std::vector<std::vector<float>> conv_taps_;  // [state layer][K · Cv]: each DeltaNet conv's taps (conv_taps)
  TensorView mtp_head_;               // the MTP head's lm_head rows (set_mtp_vocab); empty: all of lm_head
  std::shared_ptr<WeightArena> mtp_head_memory_;  // mtp_head_'s bytes when gathered (set_mtp_tokens)
};

}  // namespace ds
