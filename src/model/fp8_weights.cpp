#include "model/fp8_weights.h"

#include "kernels/formats/fp8/block_fp8.h"
#include "util/str_cat.h"

namespace ds {

namespace {

constexpr std::string_view kScaleSuffix = "_scale_inv";

}  // namespace

Fp8Pairing pair_block_fp8(const Checkpoint& checkpoint, const ModelConfig& config, std::vector<std::string>* problems) {
  Fp8Pairing pairing;
  bool reported_config = false;
  for (const auto& [name, view] : checkpoint.tensors()) {
    if (view.dtype == DType::F8_E5M2) {
      problems->push_back(str_cat("tensor \"", name, "\": F8_E5M2 is not supported (block-FP8 weights are F8_E4M3)"));
      continue;
    }
    if (name.ends_with(kScaleSuffix)) {
      const std::string weight = name.substr(0, name.size() - kScaleSuffix.size());
      const TensorView* codes = checkpoint.find(weight);
      if (codes == nullptr)
        problems->push_back(str_cat("tensor \"", name, "\": a weight_scale_inv without its weight \"", weight, "\""));
      else if (codes->dtype != DType::F8_E4M3)
        problems->push_back(str_cat("tensor \"", name, "\": a weight_scale_inv beside \"", weight, "\", which is ",
                                    dtype_name(codes->dtype), " (expected F8_E4M3 codes)"));
      continue;
    }
    if (view.dtype != DType::F8_E4M3) continue;
    if (!config.quantization) {
      if (!reported_config)
        problems->push_back(str_cat("tensor \"", name, "\" is F8_E4M3, but config.json has no quantization_config "
                                    "(expected {\"quant_method\": \"fp8\", \"fmt\": \"e4m3\", \"weight_block_size\": [128, 128], ...})"));
      reported_config = true;
      continue;
    }
    const std::string scale_name = name + std::string(kScaleSuffix);
    const TensorView* scales = checkpoint.find(scale_name);
    if (scales == nullptr) {
      problems->push_back(str_cat("tensor \"", name, "\": F8_E4M3 without \"", scale_name,
                                  "\" (block-FP8 codes mean nothing without their scales)"));
      continue;
    }
    if (view.shape.size() != 2) {
      problems->push_back(str_cat("tensor \"", name, "\": block-FP8 weights are 2-D [out, in], found shape ",
                                  shape_to_string(view.shape)));
      continue;
    }
    const std::vector<int64_t> grid{fp8_blocks(view.shape[0]), fp8_blocks(view.shape[1])};
    if (scales->dtype != DType::BF16 && scales->dtype != DType::F16 && scales->dtype != DType::F32) {
      problems->push_back(str_cat("tensor \"", scale_name, "\": expected dtype BF16, F16 or F32, found ", dtype_name(scales->dtype)));
      continue;
    }
    if (scales->shape != grid) {
      problems->push_back(str_cat("tensor \"", scale_name, "\": expected shape ", shape_to_string(grid), " (one scale per ",
                                  kFp8Block, " × ", kFp8Block, " block of ", shape_to_string(view.shape), "), found ",
                                  shape_to_string(scales->shape)));
      continue;
    }
    TensorView paired = view;
    paired.format = WeightFormatId::fp8_blocks;
    paired.block_scales = scales->data;
    paired.block_scale_dtype = scales->dtype;
    pairing.weights.emplace(name, std::move(paired));
    pairing.scales.push_back(scale_name);
  }
  return pairing;
}

}  // namespace ds
