// `deltaserve inspect --model DIR` (or FILE.gguf, inspect_gguf.h): what a user wants to know before running a checkpoint —
// architecture, layer pattern, sizes, dtypes, parameters and bytes per part, tokenizer and
// template, and the memory a context needs. Binds every tensor, so it also validates the files.
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>

#include "model_argument.h"
#include "cli_errors.h"
#include "commands.h"
#include "inspect_gguf.h"
#include "io/checkpoint_files.h"
#include "io/generation_config.h"
#include "io/model_config.h"
#include "io/safetensors_checkpoint.h"
#include "model/model_summary.h"
#include "model/qwen35_weights.h"
#include "util/human.h"

namespace ds::app {
namespace {

struct InspectOptions {
  std::string model_dir;
  int64_t context = 32768;
};

std::string layer_pattern(const TextConfig& c) {
  std::string pattern;
  for (size_t i = 0; i < c.layer_types.size(); ++i) {
    if (i > 0 && i % 4 == 0) pattern += ' ';
    pattern += c.layer_types[i] == LayerType::full_attention ? 'F' : 'L';
  }
  return pattern;
}

std::string dtype_list(const std::map<DType, uint64_t>& counts) {
  std::string text;
  for (const auto& [dtype, count] : counts) text += str_cat(text.empty() ? "" : ", ", dtype_name(dtype), " ×", count);
  return text;
}

// "BF16 ×103 (63.6 M params, 121.25 MiB), F8_E4M3 ×32 (…)": every tensor of the files by dtype.
std::string dtype_totals(const Checkpoint& checkpoint) {
  struct Total {
    uint64_t tensors = 0, params = 0, bytes = 0;
  };
  std::map<DType, Total> totals;
  for (const auto& [name, view] : checkpoint.tensors()) {
    Total& total = totals[view.dtype];
    total.tensors += 1;
    total.params += view.numel();
    total.bytes += view.nbytes;
  }
  std::string text;
  for (const auto& [dtype, t] : totals)
    text += str_cat(text.empty() ? "" : ", ", dtype_name(dtype), " ×", t.tensors, " (", human_count(t.params), " params, ",
                    human_bytes(t.bytes), ")");
  return text;
}

// "block FP8 (e4m3, 128 × 128 blocks, dynamic activation scales): 32 weights F8_E4M3 with BF16 weight_scale_inv
// (…); modules_to_not_convert: 55 names, informational".
std::string block_fp8_summary(const Checkpoint& checkpoint, const QuantizationConfig& quantization) {
  uint64_t weights = 0, scale_bytes = 0;
  std::set<std::string> scale_dtypes;
  for (const auto& [name, view] : checkpoint.tensors()) {
    if (view.dtype == DType::F8_E4M3) ++weights;
    if (!name.ends_with("_scale_inv")) continue;
    scale_bytes += view.nbytes;
    scale_dtypes.insert(std::string(dtype_name(view.dtype)));
  }
  std::string dtypes;
  for (const std::string& dtype : scale_dtypes) dtypes += (dtypes.empty() ? "" : "/") + dtype;
  return str_cat(describe(quantization), ": ", weights, " weights F8_E4M3 with ", dtypes.empty() ? "no" : dtypes,
                 " weight_scale_inv (", human_bytes(scale_bytes), "); modules_to_not_convert: ",
                 quantization.modules_to_not_convert.size(), " names, informational (FP8 is found by dtype and scale)");
}

// "1 layer (fc [64, 128], gated attention, MLP; embedding and head shared with the model): 15 tensors,
// 58.4K parameters, 114 KiB".
std::string mtp_summary(const Qwen35Weights& weights, const ModelSummary& summary, const TextConfig& c) {
  const auto part = summary.parts.find(WeightPart::mtp);
  if (!weights.mtp || part == summary.parts.end())
    return str_cat("no mtp.* tensors (config: ", c.mtp_num_hidden_layers, " layer(s)): MTP unavailable");
  const PartSummary& s = part->second;
  return str_cat(weights.mtp->layers.size(), " layer(s) (fc ", shape_to_string(weights.mtp->fc.shape),
                 ", gated attention, MLP; embedding and head shared with the model): ", s.tensors, " tensors, ",
                 human_count(s.params), " parameters, ", human_bytes(s.bytes));
}

int run_inspect(const InspectOptions& options) {
  if (options.model_dir.ends_with(".gguf")) return inspect_gguf(options.model_dir);
  auto files = find_checkpoint_files(options.model_dir);
  if (!files.ok()) return report_error(files.status());
  auto config = load_model_config(options.model_dir);
  if (!config.ok()) return report_error(config.status().with_context(options.model_dir));
  auto checkpoint = SafetensorsCheckpoint::open_dir(options.model_dir);
  if (!checkpoint.ok()) return report_error(checkpoint.status().with_context(options.model_dir));
  BindReport report;
  auto weights = bind_qwen35_weights(*checkpoint, *config, &report);
  if (!weights.ok()) return report_error(weights.status().with_context(options.model_dir));

  const ModelConfig& m = *config;
  const TextConfig& c = m.text;
  const ModelSummary summary = summarize_checkpoint(*checkpoint, m, report.text_prefix);
  const int64_t n_full = c.num_layers_of(LayerType::full_attention);
  const int64_t n_linear = c.num_layers_of(LayerType::linear_attention);

  std::printf("%s\n", options.model_dir.c_str());
  std::string arch = m.architectures.empty() ? std::string("(no architectures)") : m.architectures.front();
  print_inspect_row("architecture", str_cat(arch, " (model_type ", m.model_type, m.nested ? ", text " + c.model_type : std::string(),
                                    m.transformers_version.empty() ? "" : ", transformers " + m.transformers_version, ")"));
  print_inspect_row("layout", str_cat(report.text_prefix == kNestedTextPrefix ? "released (model.language_model.*)" : "text-only (model.*)",
                              ", ", checkpoint->files().size(), " file(s), ", human_bytes(summary.total_bytes)));
  print_inspect_row("text model", str_cat("hidden ", c.hidden_size, ", ", c.num_hidden_layers, " layers (", n_linear,
                                  " linear_attention + ", n_full, " full_attention), intermediate ", c.intermediate_size,
                                  ", vocab ", c.vocab_size));
  print_inspect_row("layer pattern", layer_pattern(c));
  print_inspect_row("attention", str_cat(c.num_attention_heads, " query heads (+ output gate), ", c.num_key_value_heads,
                                 " KV heads, head_dim ", c.head_dim, ", rotary ", c.rotary_dim(), " (partial ",
                                 c.rope.partial_rotary_factor, "), theta ", c.rope.rope_theta,
                                 c.rope.mrope_section.empty() ? std::string()
                                     : str_cat(", mrope [", c.rope.mrope_section[0], ",", c.rope.mrope_section[1], ",",
                                               c.rope.mrope_section[2], "] interleaved")));
  print_inspect_row("deltanet", str_cat(c.linear_num_key_heads, " key heads × ", c.linear_key_head_dim, ", ",
                                c.linear_num_value_heads, " value heads × ", c.linear_value_head_dim, ", conv kernel ",
                                c.linear_conv_kernel_dim, ", conv channels ", c.conv_dim()));
  print_inspect_row("head", weights->tied ? "tied to embed_tokens" : "untied (lm_head.weight)");
  for (const std::string& ignored : report.ignored) print_inspect_row("ignored", ignored);
  if (m.vision) {
    const VisionConfig& v = *m.vision;
    const auto part = summary.parts.find(WeightPart::vision);
    const std::string size = part == summary.parts.end()
                                 ? std::string("no tensors")
                                 : str_cat(part->second.tensors, " tensors, ", human_count(part->second.params), " parameters, ",
                                           human_bytes(part->second.bytes));
    const bool preprocessor = std::filesystem::exists(std::filesystem::path(options.model_dir) / "preprocessor_config.json");
    print_inspect_row("vision", str_cat("depth ", v.depth, ", hidden ", v.hidden_size, ", ", v.num_heads, " heads, patch ",
                                v.patch_size, ", merge ", v.spatial_merge_size, ", out ", v.out_hidden_size, "; ", size,
                                preprocessor ? "; images served (preprocessor_config.json)"
                                             : "; no preprocessor_config.json: images refused"));
  } else {
    print_inspect_row("vision", report.skipped_vision.empty() ? "none" : str_cat(report.skipped_vision.size(), " tensors without a vision_config, skipped"));
  }
  print_inspect_row("mtp", mtp_summary(*weights, summary, c));
  print_inspect_row("dtypes", str_cat(dtype_totals(*checkpoint), c.dtype.empty() ? std::string() : " (config dtype " + c.dtype + ")"));
  if (m.quantization) print_inspect_row("quantization", block_fp8_summary(*checkpoint, *m.quantization));
  const CheckpointFiles& f = *files;
  print_inspect_row("tokenizer", str_cat(f.tokenizer_json ? "tokenizer.json" : "no tokenizer.json",
                                 f.tokenizer_config ? ", tokenizer_config.json" : ", no tokenizer_config.json"));
  print_inspect_row("chat template", f.chat_template_source.empty() ? "none" : "from " + f.chat_template_source);
  const auto generation = load_generation_config(options.model_dir);
  print_inspect_row("generation", !f.generation_config ? "no generation_config.json (built-in defaults)"
                                  : generation.ok()    ? str_cat("generation_config.json: ", sampling_defaults_text(*generation))
                                                       : str_cat("generation_config.json refused: ", generation.status().message()));

  std::printf("\n  %-12s %12s %14s %8s  %s\n", "part", "params", "bytes", "tensors", "dtypes");
  for (WeightPart part : kAllWeightParts) {
    auto it = summary.parts.find(part);
    if (it == summary.parts.end()) continue;
    const PartSummary& s = it->second;
    std::printf("  %-12s %12s %14s %8llu  %s\n", weight_part_name(part), human_count(s.params).c_str(),
                human_bytes(s.bytes).c_str(), static_cast<unsigned long long>(s.tensors), dtype_list(s.dtype_tensors).c_str());
  }
  std::printf("  %-12s %12s %14s\n", "total", human_count(summary.total_params).c_str(), human_bytes(summary.total_bytes).c_str());

  std::printf("\n  memory per sequence (KV, DeltaNet state and conv inputs in fp32 as cached today; workspace not included)\n");
  std::printf("  %-10s %14s %16s %26s\n", "context", "attention KV", "DeltaNet state", "+ text weights (1 seq)");
  std::vector<int64_t> contexts{4096, 32768, 262144};
  if (std::find(contexts.begin(), contexts.end(), options.context) == contexts.end()) contexts.push_back(options.context);
  std::sort(contexts.begin(), contexts.end());
  for (int64_t context : contexts) {
    const ContextMemory memory = context_memory(c, context);
    std::printf("  %-10lld %14s %16s %26s%s\n", static_cast<long long>(context), human_bytes(memory.kv_bytes).c_str(),
                human_bytes(memory.state_bytes).c_str(),
                human_bytes(summary.text_bytes + memory.kv_bytes + memory.state_bytes).c_str(),
                context > c.max_position_embeddings ? "  (beyond max_position_embeddings)" : "");
  }
  return 0;
}

}  // namespace

CommandRunner add_inspect_command(CLI::App& app) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App* command = app.add_subcommand("inspect", "Describe a checkpoint: architecture, sizes, dtypes, memory; validates every tensor");
  add_model_option(command, options->model_dir,
                   "Checkpoint directory (HF layout), or a .gguf file (its container: metadata, tensor types, bits per weight)")
      ->required();
  command->add_option("--context", options->context, "Context length to size memory for (also shown: 4K, 32K, 256K)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  return [options] { return run_inspect(*options); };
}

}  // namespace ds::app
