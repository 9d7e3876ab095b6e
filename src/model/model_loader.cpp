// load_model: config → checkpoint → binding → Qwen35Model, logging what was loaded.
#include "model/model_loader.h"

#include <chrono>
#include <filesystem>
#include <set>

#include "kernels/formats/int8_panels/int8_panels.h"
#include "io/safetensors_checkpoint.h"
#include "model/bf16_repack.h"
#include "model/gguf_checkpoint.h"
#include "model/gguf_config.h"
#include "model/model_summary.h"
#include "model/quantize.h"
#include "util/human.h"
#include "util/log.h"
#include "util/process_memory.h"
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

// "weights: block FP8 (e4m3, 128 × 128 blocks, dynamic activation scales): 186 of 187 matmul weights, scales BF16; …".
void log_block_fp8(const ModelConfig& config, Qwen35Weights& weights) {
  int64_t fp8 = 0, total = 0;
  std::set<std::string> scale_dtypes;
  for (const TensorView* view : packed_matmul_weights(weights)) {
    ++total;
    if (view->format != WeightFormatId::fp8_blocks) continue;
    ++fp8;
    scale_dtypes.insert(std::string(dtype_name(view->block_scale_dtype)));
  }
  if (fp8 == 0) return;
  std::string dtypes;
  for (const std::string& dtype : scale_dtypes) dtypes += (dtypes.empty() ? "" : "/") + dtype;
  log::info("weights: ", describe(*config.quantization), ": ", fp8, " of ", total, " matmul weights F8_E4M3 with ", dtypes,
            " weight_scale_inv (found in the files; quantization_config.modules_to_not_convert, ",
            config.quantization->modules_to_not_convert.size(), " names, is not used to decide); activations stay bf16");
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
  log_block_fp8(loaded.config, bound);
  loaded.weights = choice;
  for (const TensorView* w : matmul_weights(bound)) loaded.matmul_file_bytes += w->nbytes;
  // Each packed weight's source is given back at once: its mapped pages, and a converted tensor's
  // memory (a GGUF's reordered value heads) as soon as no bound view reads it any more.
  uint64_t converted_freed = 0;
  const auto bytes_in_use = [&] {
    std::set<const std::byte*> in_use;
    for (const TensorView* view : text_views(bound)) in_use.insert(view->data);
    return in_use;
  };
  SourceRelease release;
  release.release = [&](const TensorView& source) -> uint64_t {
    if (!source.owned) return release_source_pages(source);
    const uint64_t freed = loaded.checkpoint->release_converted(bytes_in_use());
    converted_freed += freed;
    return freed;
  };
  const auto arena_note = [&] {
    return str_cat(human_bytes(loaded.repacked->bytes()), " in memory (", human_bytes(loaded.repacked->huge_page_bytes()),
                   " of it in 2 MiB pages)");
  };
  const auto source_note = [&] {
    return str_cat(human_bytes(release.released - converted_freed), " of mapped source pages released");
  };
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  if (choice == WeightsChoice::int8) {
    loaded.repacked = quantize_weights_int8(bound, threads, release);
    log::info("weights: quantised to int8 (a scale per ", kInt8ScaleGroup, " inputs) in ", seconds(), " s: ", arena_note(), ", ",
              source_note());
  } else if (choice == WeightsChoice::q4_k) {
    DS_ASSIGN_OR_RETURN(loaded.repacked,
                        quantize_weights_q4_k(bound, backend, Qwen35Model::effective_mode(mode, bound) == ComputeMode::fast,
                                              threads, release));
    log::info("weights: quantised to Q4_K (the head to Q6_K; DeltaNet in_proj_a/b as stored) in ", seconds(), " s: ",
              arena_note(), ", ", source_note());
  } else if (choice == WeightsChoice::native) {
    const bool fast = Qwen35Model::effective_mode(mode, bound) == ComputeMode::fast;
    loaded.repacked = repack_weights_bf16(bound, backend, fast, threads, release);
    if (loaded.repacked)
      log::info("weights: matmul weights repacked into panels (bf16 panels; block FP8 into FP8 panels and GGUF blocks into their kernels' panels, losslessly) in ", seconds(), " s: ",
                arena_note(), ", ", source_note(), " (--weights mapped: read in place)");
  }
  for (const TensorView* w : matmul_weights(bound)) loaded.matmul_bytes += w->nbytes;
  if (loaded.repacked) converted_freed += loaded.checkpoint->release_converted(bytes_in_use());  // any left unread
  if (converted_freed > 0)
    log::info("weights: ", human_bytes(converted_freed), " of values converted at load freed, each as soon as its packed copy replaced it");
  for (TensorView* view : packed_matmul_weights(bound))
    if (view->format == WeightFormatId::fp8_blocks) {
      log::warn("weights: block-FP8 matmuls run the scalar reference here (the FP8 kernels need AVX2 or AVX-512, "
                "fast mode and repacking; --weights int8 requantises them for the int8 kernels): slow");
      break;
    }
  loaded.model = std::make_unique<Qwen35Model>(loaded.config, std::move(bound), backend, mode);
  log::info("model: ", dir, " (", c.num_hidden_layers, " layers: ", c.num_layers_of(LayerType::linear_attention),
            " Gated DeltaNet + ", c.num_layers_of(LayerType::full_attention), " gated attention; hidden ", c.hidden_size,
            ", vocab ", c.vocab_size, ")");
  log::info("weights: ", human_bytes(summary.text_bytes), " text (", human_count(summary.total_params), " parameters in ",
            loaded.checkpoint->files().size(), " file(s), mmapped, ", loaded.model->config().dtype.empty() ? "dtype unknown" : c.dtype,
            ")", report.skipped_vision.empty() ? "" : str_cat("; the vision tower's ", report.skipped_vision.size(), " tensors are left to the vision loader"));
  if (const auto mtp = summary.parts.find(WeightPart::mtp); loaded.model->has_mtp() && mtp != summary.parts.end())
    log::info("mtp: head bound (", loaded.model->weights().mtp->layers.size(), " layer(s), ", human_count(mtp->second.params),
              " parameters, ", human_bytes(mtp->second.bytes), ")");
  log::info("compute: ", loaded.model->mode() == ComputeMode::f32 ? "f32 (fp32 activations)" : "fast (bf16 matmul inputs, fp32 accumulation)",
            ", backend ", backend.name());
  return loaded;
}

}  // namespace ds
