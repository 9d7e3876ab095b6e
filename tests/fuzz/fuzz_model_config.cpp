// libFuzzer target: config.json parsing, then everything derived from an accepted config
// (the weight table and memory sizing that `inspect` and binding compute).
#include <cstddef>
#include <cstdint>
#include <string>

#include "io/model_config.h"
#include "model/model_summary.h"
#include "model/weight_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto config = ds::parse_model_config(text, "fuzz/config.json");
  if (!config.ok()) return 0;
  if (static_cast<int64_t>(config->text.layer_types.size()) != config->text.num_hidden_layers) __builtin_trap();
  ds::WeightTableOptions options;
  options.mtp = true;
  const auto table = ds::qwen35_weight_table(*config, options);
  for (const ds::WeightSpec& spec : table)
    for (int64_t dim : spec.shape)
      if (dim <= 0) __builtin_trap();
  (void)ds::context_memory(config->text, 262144);
  return 0;
}
