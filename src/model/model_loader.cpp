// load_model: config → checkpoint → binding → Qwen35Model, logging what was loaded.
#include "model/model_loader.h"

#include <chrono>

#include "kernels/formats/int8_panels/int8_panels.h"
#include "model/bf16_repack.h"
#include "model/model_summary.h"
#include "model/quantize.h"
#include "util/human.h"
#include "util/log.h"

namespace ds {

Result<LoadedModel> load_model(const std::string& dir, Backend& backend, ComputeMode mode, WeightsChoice choice,
                               int threads) {
  LoadedModel loaded;
  auto config = load_model_config(dir);
  if (!config.ok()) return config.status().with_context(dir);
  loaded.config = std::move(config).value();
  auto checkpoint = SafetensorsCheckpoint::open_dir(dir);
  if (!checkpoint.ok()) return checkpoint.status().with_context(dir);
  loaded.checkpoint = std::make_unique<SafetensorsCheckpoint>(std::move(checkpoint).value());
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
      log::info("weights: bf16 matmul weights repacked into panels in ", seconds(), " s: ", human_bytes(loaded.repacked->bytes()),
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
