// The Qwen3.5 tensor table (names and shapes: spec §2; HF modeling_qwen3_5.py module tree).
#include "model/weight_spec.h"

#include "model/qwen35_weights.h"

namespace ds {
namespace {

// Appends specs for one layer/module; `prefix` ends with '.'.
class TableBuilder {
 public:
  explicit TableBuilder(std::vector<WeightSpec>& out) : out_(out) {}
  void add(const std::string& name, std::vector<int64_t> shape, WeightPart part, WeightInit init,
           TensorView* target = nullptr, DType dtype = DType::BF16) {
    out_.push_back(WeightSpec{name, std::move(shape), part, dtype, init, target});
  }
  // A projection Qwen's FP8 releases convert to block FP8.
  void fp8_linear(const std::string& name, std::vector<int64_t> shape, WeightPart part, TensorView* target) {
    add(name, std::move(shape), part, WeightInit::normal, target);
    out_.back().block_fp8_in_release = true;
  }

  void attention(const std::string& p, const TextConfig& c, WeightPart part, FullAttentionWeights* w) {
    const int64_t H = c.hidden_size, D = c.head_dim, nH = c.num_attention_heads, nKV = c.num_key_value_heads;
    fp8_linear(p + "q_proj.weight", {nH * 2 * D, H}, part, w ? &w->q_proj : nullptr);
    fp8_linear(p + "k_proj.weight", {nKV * D, H}, part, w ? &w->k_proj : nullptr);
    fp8_linear(p + "v_proj.weight", {nKV * D, H}, part, w ? &w->v_proj : nullptr);
    fp8_linear(p + "o_proj.weight", {H, nH * D}, part, w ? &w->o_proj : nullptr);
    add(p + "q_norm.weight", {D}, part, WeightInit::centred_norm, w ? &w->q_norm : nullptr);
    add(p + "k_norm.weight", {D}, part, WeightInit::centred_norm, w ? &w->k_norm : nullptr);
  }

  void deltanet(const std::string& p, const TextConfig& c, GatedDeltaNetWeights* w) {
    const int64_t H = c.hidden_size, nV = c.linear_num_value_heads, dV = c.linear_value_head_dim;
    const WeightPart part = WeightPart::deltanet;
    fp8_linear(p + "in_proj_qkv.weight", {c.conv_dim(), H}, part, w ? &w->in_proj_qkv : nullptr);
    fp8_linear(p + "in_proj_z.weight", {nV * dV, H}, part, w ? &w->in_proj_z : nullptr);
    add(p + "in_proj_b.weight", {nV, H}, part, WeightInit::normal, w ? &w->in_proj_b : nullptr);
    add(p + "in_proj_a.weight", {nV, H}, part, WeightInit::normal, w ? &w->in_proj_a : nullptr);
    add(p + "conv1d.weight", {c.conv_dim(), 1, c.linear_conv_kernel_dim}, part, WeightInit::conv,
        w ? &w->conv1d : nullptr);
    // Qwen3.5 files keep these two in fp32 (spec §1.4).
    add(p + "A_log", {nV}, part, WeightInit::a_log, w ? &w->A_log : nullptr, DType::F32);
    add(p + "dt_bias", {nV}, part, WeightInit::dt_bias, w ? &w->dt_bias : nullptr);
    add(p + "norm.weight", {dV}, part, WeightInit::plain_norm, w ? &w->norm : nullptr, DType::F32);
    fp8_linear(p + "out_proj.weight", {H, nV * dV}, part, w ? &w->out_proj : nullptr);
  }

  void mlp(const std::string& p, const TextConfig& c, WeightPart part, MlpWeights* w) {
    const int64_t H = c.hidden_size, I = c.intermediate_size;
    fp8_linear(p + "gate_proj.weight", {I, H}, part, w ? &w->gate_proj : nullptr);
    fp8_linear(p + "up_proj.weight", {I, H}, part, w ? &w->up_proj : nullptr);
    fp8_linear(p + "down_proj.weight", {H, I}, part, w ? &w->down_proj : nullptr);
  }

  void vision(const std::string& p, const VisionConfig& v) {
    const int64_t D = v.hidden_size, I = v.intermediate_size, M = v.spatial_merge_size * v.spatial_merge_size * D;
    const WeightPart part = WeightPart::vision;
    add(p + "patch_embed.proj.weight", {D, v.in_channels, v.temporal_patch_size, v.patch_size, v.patch_size}, part,
        WeightInit::normal);
    add(p + "patch_embed.proj.bias", {D}, part, WeightInit::bias);
    add(p + "pos_embed.weight", {v.num_position_embeddings, D}, part, WeightInit::normal);
    for (int64_t i = 0; i < v.depth; ++i) {
      const std::string b = p + "blocks." + std::to_string(i) + ".";
      add(b + "norm1.weight", {D}, part, WeightInit::plain_norm);
      add(b + "norm1.bias", {D}, part, WeightInit::bias);
      add(b + "attn.qkv.weight", {3 * D, D}, part, WeightInit::normal);
      add(b + "attn.qkv.bias", {3 * D}, part, WeightInit::bias);
      add(b + "attn.proj.weight", {D, D}, part, WeightInit::normal);
      add(b + "attn.proj.bias", {D}, part, WeightInit::bias);
      add(b + "norm2.weight", {D}, part, WeightInit::plain_norm);
      add(b + "norm2.bias", {D}, part, WeightInit::bias);
      add(b + "mlp.linear_fc1.weight", {I, D}, part, WeightInit::normal);
      add(b + "mlp.linear_fc1.bias", {I}, part, WeightInit::bias);
      add(b + "mlp.linear_fc2.weight", {D, I}, part, WeightInit::normal);
      add(b + "mlp.linear_fc2.bias", {D}, part, WeightInit::bias);
    }
    add(p + "merger.norm.weight", {D}, part, WeightInit::plain_norm);
    add(p + "merger.norm.bias", {D}, part, WeightInit::bias);
    add(p + "merger.linear_fc1.weight", {M, M}, part, WeightInit::normal);
    add(p + "merger.linear_fc1.bias", {M}, part, WeightInit::bias);
    add(p + "merger.linear_fc2.weight", {v.out_hidden_size, M}, part, WeightInit::normal);
    add(p + "merger.linear_fc2.bias", {v.out_hidden_size}, part, WeightInit::bias);
  }

  void mtp(const TextConfig& c, MtpWeights* w) {
    const int64_t H = c.hidden_size;
    const WeightPart part = WeightPart::mtp;
    const std::string p = kMtpPrefix;
    add(p + "pre_fc_norm_embedding.weight", {H}, part, WeightInit::centred_norm, w ? &w->pre_fc_norm_embedding : nullptr);
    add(p + "pre_fc_norm_hidden.weight", {H}, part, WeightInit::centred_norm, w ? &w->pre_fc_norm_hidden : nullptr);
    add(p + "fc.weight", {H, 2 * H}, part, WeightInit::normal, w ? &w->fc : nullptr);
    for (int64_t i = 0; i < c.mtp_num_hidden_layers; ++i) {
      DecoderLayerWeights* layer = w ? &w->layers[static_cast<size_t>(i)] : nullptr;
      if (layer) layer->type = LayerType::full_attention;
      const std::string l = p + "layers." + std::to_string(i) + ".";
      add(l + "input_layernorm.weight", {H}, part, WeightInit::centred_norm, layer ? &layer->input_layernorm : nullptr);
      add(l + "post_attention_layernorm.weight", {H}, part, WeightInit::centred_norm,
          layer ? &layer->post_attention_layernorm : nullptr);
      attention(l + "self_attn.", c, part, layer ? &layer->attention : nullptr);
      mlp(l + "mlp.", c, part, layer ? &layer->mlp : nullptr);
    }
    add(p + "norm.weight", {H}, part, WeightInit::centred_norm, w ? &w->norm : nullptr);
  }

 private:
  std::vector<WeightSpec>& out_;
};

}  // namespace

const char* weight_part_name(WeightPart part) {
  switch (part) {
    case WeightPart::embeddings: return "embeddings";
    case WeightPart::deltanet: return "deltanet";
    case WeightPart::attention: return "attention";
    case WeightPart::mlp: return "mlp";
    case WeightPart::norms: return "norms";
    case WeightPart::head: return "head";
    case WeightPart::vision: return "vision";
    case WeightPart::mtp: return "mtp";
  }
  return "?";
}

bool is_accepted_text_dtype(DType dtype) { return dtype == DType::BF16 || dtype == DType::F16 || dtype == DType::F32; }

std::vector<WeightSpec> qwen35_weight_table(const ModelConfig& config, const WeightTableOptions& options,
                                            Qwen35Weights* weights) {
  const TextConfig& c = config.text;
  std::vector<WeightSpec> table;
  TableBuilder b(table);
  const std::string& p = options.text_prefix;
  if (weights) weights->layers.assign(static_cast<size_t>(c.num_hidden_layers), DecoderLayerWeights{});

  b.add(p + "embed_tokens.weight", {c.vocab_size, c.hidden_size}, WeightPart::embeddings, WeightInit::normal,
        weights ? &weights->embed_tokens : nullptr);
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    DecoderLayerWeights* layer = weights ? &weights->layers[static_cast<size_t>(i)] : nullptr;
    const LayerType type = c.layer_types[static_cast<size_t>(i)];
    if (layer) layer->type = type;
    const std::string l = p + "layers." + std::to_string(i) + ".";
    b.add(l + "input_layernorm.weight", {c.hidden_size}, WeightPart::norms, WeightInit::centred_norm,
          layer ? &layer->input_layernorm : nullptr);
    b.add(l + "post_attention_layernorm.weight", {c.hidden_size}, WeightPart::norms, WeightInit::centred_norm,
          layer ? &layer->post_attention_layernorm : nullptr);
    if (type == LayerType::full_attention) b.attention(l + "self_attn.", c, WeightPart::attention, layer ? &layer->attention : nullptr);
    else b.deltanet(l + "linear_attn.", c, layer ? &layer->deltanet : nullptr);
    b.mlp(l + "mlp.", c, WeightPart::mlp, layer ? &layer->mlp : nullptr);
  }
  b.add(p + "norm.weight", {c.hidden_size}, WeightPart::norms, WeightInit::centred_norm, weights ? &weights->norm : nullptr);
  if (options.lm_head)
    b.add("lm_head.weight", {c.vocab_size, c.hidden_size}, WeightPart::head, WeightInit::normal,
          weights ? &weights->lm_head : nullptr);
  if (options.vision && config.vision) b.vision(kVisionPrefix, *config.vision);
  if (options.mtp) {
    if (weights) {
      weights->mtp.emplace();
      weights->mtp->layers.assign(static_cast<size_t>(c.mtp_num_hidden_layers), DecoderLayerWeights{});
    }
    b.mtp(c, weights ? &*weights->mtp : nullptr);
  }
  return table;
}

}  // namespace ds
