// bind_vision_weights: the weight table's vision specs looked up in the checkpoint by name.
#include "vision/vision_weights.h"

#include <map>

#include "model/weight_spec.h"

namespace ds {
namespace {

constexpr size_t kMaxListedProblems = 20;

bool readable_dtype(DType dtype) { return dtype == DType::BF16 || dtype == DType::F16 || dtype == DType::F32; }

}  // namespace

Result<VisionWeights> bind_vision_weights(Checkpoint& checkpoint, const ModelConfig& config) {
  if (!config.vision)
    return Status::errorf("config.json: expected a vision_config for images, found none (a text-only checkpoint)");
  const VisionConfig& v = *config.vision;
  if (v.hidden_act != "gelu_pytorch_tanh")
    return Status::errorf("config.json: vision_config.hidden_act: expected \"gelu_pytorch_tanh\", found \"", v.hidden_act, "\"");
  if ((v.hidden_size / v.num_heads) % 4 != 0)
    return Status::errorf("config.json: vision_config: expected a head size (hidden_size / num_heads) that is a multiple "
                          "of 4, found ", v.hidden_size / v.num_heads);
  if (v.in_channels != 3)
    return Status::errorf("config.json: vision_config.in_channels: expected 3 (RGB), found ", v.in_channels);

  WeightTableOptions options;
  options.vision = true;
  std::map<std::string, TensorView> bound;
  std::vector<std::string> problems;
  for (const WeightSpec& spec : qwen35_weight_table(config, options)) {
    if (spec.part != WeightPart::vision) continue;
    const TensorView* view = checkpoint.find(spec.name);
    if (view == nullptr) {
      problems.push_back(str_cat("missing tensor \"", spec.name, "\" (expected shape ", shape_to_string(spec.shape), ")"));
      continue;
    }
    checkpoint.mark_taken(spec.name);
    if (view->shape != spec.shape)
      problems.push_back(str_cat("tensor \"", spec.name, "\": expected shape ", shape_to_string(spec.shape), ", found ",
                                 shape_to_string(view->shape)));
    else if (view->format != WeightFormatId::stored || !readable_dtype(view->dtype))
      problems.push_back(str_cat("tensor \"", spec.name, "\": expected dtype BF16, F16 or F32, found ", dtype_name(view->dtype)));
    else
      bound[spec.name] = *view;
  }
  if (!problems.empty()) {
    std::string message = str_cat("vision tower does not match config.json (", problems.size(), " problems):");
    for (size_t i = 0; i < problems.size() && i < kMaxListedProblems; ++i) message += "\n  " + problems[i];
    if (problems.size() > kMaxListedProblems) message += str_cat("\n  ... and ", problems.size() - kMaxListedProblems, " more");
    return Status::error(message);
  }

  const std::string p = kVisionPrefix;
  VisionWeights w;
  w.patch_embed = bound[p + "patch_embed.proj.weight"];
  w.patch_embed.shape = {v.hidden_size, v.in_channels * v.temporal_patch_size * v.patch_size * v.patch_size};
  w.patch_embed_bias = bound[p + "patch_embed.proj.bias"];
  w.pos_embed = bound[p + "pos_embed.weight"];
  for (int64_t i = 0; i < v.depth; ++i) {
    const std::string b = p + "blocks." + std::to_string(i) + ".";
    w.blocks.push_back(VisionBlockWeights{
        bound[b + "norm1.weight"], bound[b + "norm1.bias"], bound[b + "attn.qkv.weight"], bound[b + "attn.qkv.bias"],
        bound[b + "attn.proj.weight"], bound[b + "attn.proj.bias"], bound[b + "norm2.weight"], bound[b + "norm2.bias"],
        bound[b + "mlp.linear_fc1.weight"], bound[b + "mlp.linear_fc1.bias"], bound[b + "mlp.linear_fc2.weight"],
        bound[b + "mlp.linear_fc2.bias"]});
  }
  w.merger_norm_weight = bound[p + "merger.norm.weight"];
  w.merger_norm_bias = bound[p + "merger.norm.bias"];
  w.merger_fc1_weight = bound[p + "merger.linear_fc1.weight"];
  w.merger_fc1_bias = bound[p + "merger.linear_fc1.bias"];
  w.merger_fc2_weight = bound[p + "merger.linear_fc2.weight"];
  w.merger_fc2_bias = bound[p + "merger.linear_fc2.bias"];
  return w;
}

}  // namespace ds
