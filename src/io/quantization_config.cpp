#include "io/quantization_config.h"

#include "util/str_cat.h"

namespace ds {

Result<QuantizationConfig> parse_quantization_config(const JsonReader& q) {
  QuantizationConfig config;
  constexpr const char* kSupported = "supported: \"fp8\", block FP8 as Qwen's -FP8 releases store it";
  if (!q.has("quant_method")) return Status::errorf(q.where("quant_method"), ": missing (", kSupported, ")");
  DS_ASSIGN_OR_RETURN(config.quant_method, q.get_string("quant_method"));
  if (config.quant_method != "fp8")
    return Status::errorf(q.where("quant_method"), ": \"", config.quant_method, "\" is not supported (", kSupported, ")");
  DS_ASSIGN_OR_RETURN(config.fmt, q.get_string_or("fmt", config.fmt));
  if (config.fmt != "e4m3")
    return Status::errorf(q.where("fmt"), ": expected \"e4m3\" (F8_E4M3 weights), found \"", config.fmt, "\"",
                          config.fmt == "e5m2" ? " (e5m2 block FP8 is not supported)" : "");
  if (q.has("weight_block_size")) {
    DS_ASSIGN_OR_RETURN(config.weight_block_size, q.get_int_list("weight_block_size", 0, INT32_MAX));
  } else if (q.is_null("weight_block_size")) {
    return Status::errorf(q.where("weight_block_size"), ": expected [128, 128], found null (per-tensor FP8 is not supported)");
  }
  if (config.weight_block_size != std::vector<int64_t>{128, 128}) {
    std::string found;
    for (int64_t size : config.weight_block_size) found += str_cat(found.empty() ? "" : ", ", size);
    return Status::errorf(q.where("weight_block_size"), ": expected [128, 128], found [", found, "]");
  }
  DS_ASSIGN_OR_RETURN(config.activation_scheme, q.get_string_or("activation_scheme", config.activation_scheme));
  if (config.activation_scheme != "dynamic")
    return Status::errorf(q.where("activation_scheme"), ": expected \"dynamic\", found \"", config.activation_scheme,
                          "\" (static activation scales are not supported)");
  DS_ASSIGN_OR_RETURN(const std::string scale_fmt, q.get_string_or("scale_fmt", "float"));
  if (scale_fmt != "float")
    return Status::errorf(q.where("scale_fmt"), ": expected \"float\" (BF16, F16 or F32 weight_scale_inv), found \"", scale_fmt, "\"");
  const char* list = q.has("modules_to_not_convert") ? "modules_to_not_convert" : "ignored_layers";
  if (q.has(list)) {
    DS_ASSIGN_OR_RETURN(config.modules_to_not_convert, q.get_string_list(list));
  }
  return config;
}

std::string describe(const QuantizationConfig& config) {
  return str_cat("block FP8 (", config.fmt, ", ", config.weight_block_size[0], " × ", config.weight_block_size[1],
                 " blocks, ", config.activation_scheme, " activation scales)");
}

}  // namespace ds
