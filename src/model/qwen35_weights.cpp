// Binding a checkpoint to Qwen35Weights through the weight table; every problem is collected and
// reported at once (name, expected, found), so a user fixes a broken checkpoint in one pass.
#include "model/qwen35_weights.h"

#include "model/fp8_weights.h"
#include "model/weight_spec.h"

namespace ds {
namespace {

constexpr size_t kMaxListedProblems = 20;

bool starts_with(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

Status problems_to_status(const std::vector<std::string>& problems) {
  if (problems.empty()) return {};
  std::string message = problems.size() == 1 ? "checkpoint does not match config.json: "
                                             : str_cat("checkpoint does not match config.json (", problems.size(), " problems):");
  for (size_t i = 0; i < problems.size() && i < kMaxListedProblems; ++i)
    message += (problems.size() == 1 ? "" : "\n  ") + problems[i];
  if (problems.size() > kMaxListedProblems) message += str_cat("\n  ... and ", problems.size() - kMaxListedProblems, " more");
  return Status::error(message);
}

}  // namespace

Result<Qwen35Weights> bind_qwen35_weights(Checkpoint& checkpoint, const ModelConfig& config,
                                          BindReport* report) {
  BindReport local_report;
  BindReport& out = report ? *report : local_report;

  if (checkpoint.contains(std::string(kNestedTextPrefix) + "embed_tokens.weight")) out.text_prefix = kNestedTextPrefix;
  else if (checkpoint.contains(std::string(kFlatTextPrefix) + "embed_tokens.weight")) out.text_prefix = kFlatTextPrefix;
  else
    return Status::errorf("missing tensor: expected ", kNestedTextPrefix, "embed_tokens.weight (released layout) or ",
                          kFlatTextPrefix, "embed_tokens.weight (text-only layout)");

  Qwen35Weights weights;
  weights.tied = config.tie_word_embeddings;
  const bool file_has_head = checkpoint.contains("lm_head.weight");
  WeightTableOptions options;
  options.text_prefix = out.text_prefix;
  options.lm_head = !weights.tied;
  // Any mtp.* tensor means the file carries the head: then all of it is bound and checked.
  for (const auto& [name, _] : checkpoint.tensors())
    if (starts_with(name, kMtpPrefix)) options.mtp = true;
  const std::vector<WeightSpec> table = qwen35_weight_table(config, options, &weights);

  std::vector<std::string> problems;
  const Fp8Pairing fp8 = pair_block_fp8(checkpoint, config, &problems);
  for (const std::string& scale : fp8.scales) checkpoint.mark_taken(scale);
  for (const WeightSpec& spec : table) {
    const auto paired = fp8.weights.find(spec.name);
    const TensorView* view = paired != fp8.weights.end() ? &paired->second : checkpoint.find(spec.name);
    if (view == nullptr) {
      problems.push_back(str_cat("missing tensor \"", spec.name, "\" (expected shape ", shape_to_string(spec.shape),
                                 spec.name == "lm_head.weight" ? ", since tie_word_embeddings is false)" : ")"));
      continue;
    }
    checkpoint.mark_taken(spec.name);
    if (view->shape != spec.shape) {
      problems.push_back(str_cat("tensor \"", spec.name, "\": expected shape ", shape_to_string(spec.shape), ", found ",
                                 shape_to_string(view->shape)));
      continue;
    }
    // FP8 tensors pair_block_fp8 could not pair: it said why.
    if (view->format == WeightFormatId::stored && (view->dtype == DType::F8_E4M3 || view->dtype == DType::F8_E5M2)) continue;
    // GGUF blocks (q8_0, q4_k, ...: kernels/formats/): GgufCheckpoint leaves only matmul weights and
    // the embedding table in them; their formats read whole rows.
    if (view->format == WeightFormatId::stored && !is_accepted_text_dtype(view->dtype)) {
      problems.push_back(str_cat("tensor \"", spec.name, "\": expected dtype BF16, F16 or F32, found ", dtype_name(view->dtype)));
      continue;
    }
    if (spec.target) *spec.target = *view;
  }
  for (DecoderLayerWeights& layer : weights.layers)
    if (layer.type == LayerType::linear_attention)
      layer.deltanet.out_proj_column_heads = checkpoint.column_heads(layer.deltanet.out_proj.name);
  if (weights.tied) {
    weights.lm_head = weights.embed_tokens;
    if (file_has_head) {  // HF ties the parameters, so the stored copy is never used
      checkpoint.mark_taken("lm_head.weight");
      out.ignored.push_back("lm_head.weight (tie_word_embeddings is true: the head is embed_tokens)");
    }
  }

  for (const auto& [name, _] : checkpoint.tensors()) {
    if (!starts_with(name, kVisionPrefix)) continue;
    out.skipped_vision.push_back(name);
    checkpoint.mark_taken(name);
  }
  for (const std::string& name : checkpoint.untaken())
    problems.push_back(str_cat("unexpected tensor \"", name, "\" (no part of a ", config.text.num_hidden_layers,
                               "-layer Qwen3.5 model with this config uses it)"));
  DS_TRY(problems_to_status(problems));
  return weights;
}

std::vector<TensorView*> matmul_weights(Qwen35Weights& weights) {
  std::vector<TensorView*> views;
  for (DecoderLayerWeights& layer : weights.layers) {
    if (layer.type == LayerType::full_attention) {
      FullAttentionWeights& a = layer.attention;
      for (TensorView* w : {&a.q_proj, &a.k_proj, &a.v_proj, &a.o_proj}) views.push_back(w);
    } else {
      GatedDeltaNetWeights& d = layer.deltanet;
      for (TensorView* w : {&d.in_proj_qkv, &d.in_proj_z, &d.in_proj_b, &d.in_proj_a, &d.out_proj}) views.push_back(w);
    }
    for (TensorView* w : {&layer.mlp.gate_proj, &layer.mlp.up_proj, &layer.mlp.down_proj}) views.push_back(w);
  }
  views.push_back(&weights.lm_head);
  return views;
}

std::vector<TensorView*> mtp_matmul_weights(Qwen35Weights& weights) {
  std::vector<TensorView*> views;
  if (!weights.mtp) return views;
  views.push_back(&weights.mtp->fc);
  for (DecoderLayerWeights& layer : weights.mtp->layers) {
    FullAttentionWeights& a = layer.attention;
    for (TensorView* w : {&a.q_proj, &a.k_proj, &a.v_proj, &a.o_proj, &layer.mlp.gate_proj, &layer.mlp.up_proj,
                          &layer.mlp.down_proj})
      views.push_back(w);
  }
  return views;
}

std::vector<TensorView*> packed_matmul_weights(Qwen35Weights& weights) {
  std::vector<TensorView*> views = matmul_weights(weights);
  for (TensorView* w : mtp_matmul_weights(weights)) views.push_back(w);
  return views;
}

}  // namespace ds

namespace ds {

std::vector<const TensorView*> text_views(const Qwen35Weights& w) {
  std::vector<const TensorView*> views{&w.embed_tokens, &w.norm, &w.lm_head};
  std::vector<const DecoderLayerWeights*> layers;
  for (const DecoderLayerWeights& layer : w.layers) layers.push_back(&layer);
  if (w.mtp) {
    views.insert(views.end(), {&w.mtp->pre_fc_norm_embedding, &w.mtp->pre_fc_norm_hidden, &w.mtp->fc, &w.mtp->norm});
    for (const DecoderLayerWeights& layer : w.mtp->layers) layers.push_back(&layer);
  }
  for (const DecoderLayerWeights* layer_ptr : layers) {
    const DecoderLayerWeights& layer = *layer_ptr;
    const FullAttentionWeights& a = layer.attention;
    const GatedDeltaNetWeights& d = layer.deltanet;
    const MlpWeights& m = layer.mlp;
    views.insert(views.end(), {&layer.input_layernorm, &layer.post_attention_layernorm, &a.q_proj, &a.k_proj,
                               &a.v_proj, &a.o_proj, &a.q_norm, &a.k_norm, &d.in_proj_qkv, &d.in_proj_z, &d.in_proj_b,
                               &d.in_proj_a, &d.conv1d, &d.A_log, &d.dt_bias, &d.norm, &d.out_proj, &m.gate_proj,
                               &m.up_proj, &m.down_proj});
  }
  return views;
}

}  // namespace ds
