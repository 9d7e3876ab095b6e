// config.json's `quantization_config` (top level as Qwen's -FP8 releases put it, or under text_config),
// mirroring transformers' FineGrainedFP8Config key names. Only block FP8 is supported — quant_method
// "fp8", fmt "e4m3", weight_block_size [128, 128], activation_scheme "dynamic" (the activations'
// scales are computed per token at run time, so weights-only compute needs nothing from the file),
// scale_fmt "float" — and anything else is refused by name with what was expected.
#pragma once

#include <string>
#include <vector>

#include "io/json_reader.h"
#include "util/status.h"

namespace ds {

struct QuantizationConfig {
  std::string quant_method;  // "fp8"
  std::string fmt = "e4m3";
  std::vector<int64_t> weight_block_size{128, 128};
  std::string activation_scheme = "dynamic";
  // Informational only: which tensors are FP8 is decided by what the file holds (an F8_E4M3 weight
  // with a sibling weight_scale_inv), never by this list — loaders that trusted it mis-loaded released
  // checkpoints (../shared/docs/quantized-checkpoints.md §1.3). transformers' alias `ignored_layers`
  // is read too.
  std::vector<std::string> modules_to_not_convert;
};

// Parses the `quantization_config` object `reader` points at (its path names it in errors).
Result<QuantizationConfig> parse_quantization_config(const JsonReader& reader);

// "block FP8 (e4m3, 128 × 128 blocks, dynamic activation scales)".
std::string describe(const QuantizationConfig& config);

}  // namespace ds
