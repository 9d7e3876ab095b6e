// ModelSummary: per-part accounting over the weight table (spec §2, §4.4 for state sizes).
#include "model/model_summary.h"

#include <unordered_map>

namespace ds {

ModelSummary summarize_checkpoint(const Checkpoint& checkpoint, const ModelConfig& config,
                                  const std::string& text_prefix) {
  WeightTableOptions options;
  options.text_prefix = text_prefix;
  options.lm_head = true;
  options.vision = true;
  options.mtp = true;
  std::unordered_map<std::string, WeightPart> part_of;
  for (const WeightSpec& spec : qwen35_weight_table(config, options)) part_of[spec.name] = spec.part;

  ModelSummary summary;
  for (const auto& [name, view] : checkpoint.tensors()) {
    // A block-FP8 weight's scales (X.weight_scale_inv) belong to its part.
    auto it = part_of.find(name.ends_with("_scale_inv") ? name.substr(0, name.size() - 10) : name);
    WeightPart part = it != part_of.end() ? it->second
                      : name.rfind(kVisionPrefix, 0) == 0 ? WeightPart::vision
                      : name.rfind(kMtpPrefix, 0) == 0    ? WeightPart::mtp
                                                          : WeightPart::norms;  // unreachable after binding
    PartSummary& s = summary.parts[part];
    s.tensors += 1;
    s.params += view.numel();
    s.bytes += view.nbytes;
    s.dtype_tensors[view.dtype] += 1;
    summary.total_params += view.numel();
    summary.total_bytes += view.nbytes;
    if (part != WeightPart::vision && part != WeightPart::mtp) summary.text_bytes += view.nbytes;
  }
  return summary;
}

ContextMemory context_memory(const TextConfig& c, int64_t context) {
  ContextMemory memory;
  const auto full = static_cast<uint64_t>(c.num_layers_of(LayerType::full_attention));
  const auto linear = static_cast<uint64_t>(c.num_layers_of(LayerType::linear_attention));
  const uint64_t kv_per_token = full * 2 * static_cast<uint64_t>(c.num_key_value_heads * c.head_dim) * sizeof(float);
  memory.kv_bytes = kv_per_token * static_cast<uint64_t>(context);
  const auto recurrent = static_cast<uint64_t>(c.linear_num_value_heads * c.linear_key_head_dim * c.linear_value_head_dim) * 4;
  const auto conv = static_cast<uint64_t>(c.conv_dim() * (c.linear_conv_kernel_dim - 1)) * sizeof(float);
  memory.state_bytes = linear * (recurrent + conv);
  return memory;
}

}  // namespace ds
