// load_model: config → checkpoint → binding → Qwen35Model, logging what was loaded.
#include "model/model_loader.h"

#include <chrono>
#include <filesystem>

#include "kernels/formats/int8_panels/int8_panels.h"
#include "io/safetensors_checkpoint.h"
#include "model/bf16_repack.h"
#include "model/gguf_checkpoint.h"
#include "model/gguf_config.h"
#include "model/model_summary.h"
#include "model/quantize.h"
#include "util/human.h"
#include "util/log.h"
#include "util/str_cat.h"

namespace ds {

namespace {

// "GGUF: 2 files, 1.2 MiB; types Q8_0 × 25 (8.50 bits per weight, …), F32 × 31 (…)".
void log_gguf(const GgufCheckpoint& gguf) {
  std::string types;
  for (const auto& [name, count] : gguf.type_counts())
    types += str_cat(types.empty() ? "" : ", ", name, " × ", count.tensors, " (", human_count(count.values), " values, ",
                     human_bytes(count.bytes), ", ", 8.0 * static_cast<double>(count.bytes) / static_cast<double>(count.values),
                     " bits per weight)");
  log::info("gguf: ", gguf.gguf().parts().size(), " file(s), ", human_bytes(gguf.gguf().file_bytes()), "; tensor types ", types,
            gguf.converted_bytes() ? str_cat("; ", human_bytes(gguf.converted_bytes()), " converted at load (docs/gguf.md)") : "");
}

}  // namespace

bool is_gguf_path(const std::string& path) { return path.ends_with(".gguf"); }

Result<ModelConfig> load_checkpoint_config(const std::string& path) {
  if (!is_gguf_path(path)) return load_model_config(path);
  DS_ASSIGN_OR_RETURN(const GgufSet set, GgufSet::open(path));
  return gguf_model_config(set, std::filesystem::path(path).filename().string());
}

Result<std::pair<ModelConfig, std::unique_ptr<Checkpoint>>> open_checkpoint(const std::string& path) {
  if (is_gguf_path(path)) {
    auto gguf = GgufCheckpoint::open(path);
    if (!gguf.ok()) return gguf.status();
    auto checkpoint = std::make_unique<GgufCheckpoint>(std::move(gguf).value());
    ModelConfig config = checkpoint->config();
    return std::pair<ModelConfig, std::unique_ptr<Checkpoint>>{std::move(config), std::move(checkpoint)};
  }
  auto config = load_model_config(path);
  if (!config.ok()) return config.status().with_context(path);
  auto checkpoint = SafetensorsCheckpoint::open_dir(path);
  if (!checkpoint.ok()) return checkpoint.status().with_context(path);
  return std::pair<ModelConfig, std::unique_ptr<Checkpoint>>{
      std::move(config).value(), std::make_unique<SafetensorsCheckpoint>(std::move(checkpoint).value())};
}

Result<LoadedModel> load_model(const std::string& dir, Backend& backend, ComputeMode mode, WeightsChoice choice,
                               int threads) {
  LoadedModel loaded;
  DS_ASSIGN_OR_RETURN(auto opened, open_checkpoint(dir));
  loaded.config = std::move(opened.first);
  loaded.checkpoint = std::move(opened.second);
  if (const auto* gguf = dynamic_cast<const GgufCheckpoint*>(loaded.checkpoint.get())) log_gguf(*gguf);
  BindReport report;
  auto weights = bind_qwen35_weights(*loaded.checkpoint, loaded.config, &report);
  if (!weights.ok()) return weights.status().with_context(dir);

  const TextConfig& c = loaded.config.text;
  const ModelSummary summary = summarize_checkpoint(*loaded.checkpoint, loaded.config, report.text_prefix);
  Qwen35Weights bound = std::move(weights).value();
  loaded.weights = choice;
  uint64_t released = 0;
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  if (choice == WeightsChoice::int8) {
    loaded.repacked = quantize_weights_int8(bound, threads, &released);
    log::info("weights: quantised to int8 (a scale per ", kInt8ScaleGroup, " inputs) in ", seconds(), " s: ",
              human_bytes(loaded.repacked->bytes()), " in memory, ", human_bytes(released), " of mapped source pages released");
  } else if (choice == WeightsChoice::native) {
    const bool fast = Qwen35Model::effective_mode(mode, bound) == ComputeMode::fast;
    loaded.repacked = repack_weights_bf16(bound, backend, fast, threads, &released);
    if (loaded.repacked)
      log::info("weights: matmul weights repacked into panels (bf16 panels; GGUF Q8_0 into int8 panels, losslessly) in ", seconds(), " s: ", human_bytes(loaded.repacked->bytes()),
                " in memory (2 MiB pages), ", human_bytes(released), " of mapped source pages released (--weights mapped: read in place)");
  }
  loaded.model = std::make_unique<Qwen35Model>(loaded.config, std::move(bound), backend, mode);
  log::info("model: ", dir, " (", c.num_hidden_layers, " layers: ", c.num_layers_of(LayerType::linear_attention),
            " Gated DeltaNet + ", c.num_layers_of(LayerType::full_attention), " gated attention; hidden ", c.hidden_size,
            ", vocab ", c.vocab_size, ")");
  log::info("weights: ", human_bytes(summary.text_bytes), " text (", human_count(summary.total_params), " parameters in ",
            loaded.checkpoint->files().size(), " file(s), mmapped, ", loaded.model->config().dtype.empty() ? "dtype unknown" : c.dtype,
            ")", report.skipped_vision.empty() ? "" : str_cat("; vision tower skipped (", report.skipped_vision.size(), " tensors)"),
            report.skipped_mtp.empty() ? "" : str_cat("; MTP skipped (", report.skipped_mtp.size(), " tensors)"));
  log::info("compute: ", loaded.model->mode() == ComputeMode::f32 ? "f32 (fp32 activations)" : "fast (bf16 matmul inputs, fp32 accumulation)",
            ", backend ", backend.name());
  return loaded;
}

}  // namespace ds
