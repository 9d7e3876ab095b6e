// `deltaserve make-checkpoint --shape S --out DIR`: a random-weight checkpoint of a real Qwen3.5
// shape in HF layout, with a tokenizer and chat template so text works end to end; `--out FILE.gguf`
// writes the same model as a llama.cpp GGUF file (`--gguf-type` Q4_K_M, Q8_0, …).
#include <fstream>
#include <sstream>

#include "cli_errors.h"
#include "commands.h"
#include "default_assets.h"
#include "model/random_checkpoint.h"
#include "model/shape_presets.h"
#include "util/log.h"
#include "util/parallel_ranges.h"

namespace ds::app {
namespace {

struct MakeCheckpointOptions {
  std::string shape;
  RandomCheckpointOptions checkpoint;
  std::string dtype = "bf16";
  std::string gguf_type;              // GGUF file type; empty: BF16 for a .gguf output
  bool text_only = false;
  uint64_t shard_mb = 5000;
  std::string tokenizer_json;         // path overriding the built-in tokenizer.json
  std::string tokenizer_config_json;  // path overriding the built-in tokenizer_config.json
  std::string chat_template;          // path overriding the built-in chat template
};

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::errorf("cannot read ", path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

int run_make_checkpoint(MakeCheckpointOptions options) {
  auto preset = find_shape_preset(options.shape);
  if (!preset.ok()) return report_error(preset.status());
  options.checkpoint.dtype = options.dtype == "bf16" ? DType::BF16
                             : options.dtype == "f16" ? DType::F16
                             : options.dtype == "fp8" ? DType::F8_E4M3
                                                      : DType::F32;
  options.checkpoint.max_shard_bytes = options.shard_mb * 1000 * 1000;
  TokenizerAssets assets{std::string(default_tokenizer_json()), std::string(default_tokenizer_config_json()),
                         std::string(default_chat_template())};
  for (auto [path, target] : {std::pair{&options.tokenizer_json, &assets.tokenizer_json},
                              std::pair{&options.tokenizer_config_json, &assets.tokenizer_config_json},
                              std::pair{&options.chat_template, &assets.chat_template}}) {
    if (path->empty()) continue;
    auto text = read_file(*path);
    if (!text.ok()) return report_error(text.status());
    *target = std::move(text).value();
  }
  // A block-FP8 release says bfloat16: the dtype of everything it keeps unquantised.
  const std::string hf_dtype = options.dtype == "bf16" || options.dtype == "fp8" ? "bfloat16"
                               : options.dtype == "f16"                          ? "float16"
                                                                                 : "float32";
  const bool gguf = options.checkpoint.out_dir.ends_with(".gguf");
  if (!gguf && !options.gguf_type.empty())
    return report_error(Status::errorf("--gguf-type ", options.gguf_type, ": the output is a GGUF file only when --out ends in .gguf (found ",
                                       options.checkpoint.out_dir, ")"));
  auto file_type = parse_gguf_file_type(options.gguf_type.empty() ? "BF16" : options.gguf_type);
  if (!file_type.ok()) return report_error(file_type.status().with_context("--gguf-type"));
  log::info("make-checkpoint: shape ", preset->name, " (", preset->description, ")");
  const auto config = preset_config_json(*preset, options.text_only, hf_dtype);
  if (!gguf) {
    const Status status = write_random_checkpoint(config, options.checkpoint, assets);
    return status.ok() ? 0 : report_error(status);
  }
  const Status status = write_random_gguf(config, options.checkpoint, options.checkpoint.out_dir, *file_type, assets);
  return status.ok() ? 0 : report_error(status);
}

}  // namespace

CommandRunner add_make_checkpoint_command(CLI::App& app) {
  auto options = std::make_shared<MakeCheckpointOptions>();
  options->checkpoint.threads = available_threads();
  std::string shapes;
  for (const ShapePreset& preset : shape_presets()) shapes += "\n  " + preset.name + ": " + preset.description;
  CLI::App* command = app.add_subcommand(
      "make-checkpoint",
      "Write a random-weight checkpoint of a real Qwen3.5 shape (HF layout, tokenizer and chat template included). "
      "Its text is meaningless: it exists to test and benchmark without downloading weights. With --out FILE.gguf, the same "
      "model (same seed, same values) as one llama.cpp GGUF file of the text model, tokenizer and chat template in its "
      "metadata, quantised per --gguf-type while it is written (streamed: a 27B file needs no bf16 copy).\nShapes:" + shapes);
  command->add_option("--shape", options->shape, "Shape preset (tiny, qwen3.5-0.8b, 2b, 4b, 9b, 27b)")->required();
  command->add_option("-o,--out", options->checkpoint.out_dir, "Output directory, or FILE.gguf for a GGUF file")->required();
  command->add_option("--gguf-type", options->gguf_type,
                      std::string("GGUF file type, as llama.cpp names them (") + kGgufFileTypeNames +
                          "; default BF16): Q4_K_M / Q5_K_M / Q6_K follow llama-quantize's per-tensor mix (docs/gguf.md)");
  command->add_option("--seed", options->checkpoint.seed, "Random seed (same seed, same bytes)")->capture_default_str();
  command->add_flag("--with-mtp", options->checkpoint.with_mtp, "Also write the MTP head (mtp.*)");
  command->add_flag("--text-only", options->text_only,
                    "Text-only save layout (model_type qwen3_5_text, model.* names, no vision tower; a GGUF holds the text "
                    "model either way, with this layout's values)");
  command->add_option("--dtype", options->dtype,
                      "Storage dtype; bf16 keeps A_log and the gated-norm weight in f32 like Qwen3.5; fp8 writes Qwen's "
                      "block-FP8 release layout (the MLP, attention and DeltaNet qkv/z/out projections as F8_E4M3 with "
                      "BF16 weight_scale_inv per 128 x 128 block, the rest BF16; the bf16 checkpoint of the same seed, quantised). "
                      "A GGUF gets the values the safetensors checkpoint of this dtype holds (fp8: none, use --gguf-type)")
      ->check(CLI::IsMember({"bf16", "f16", "f32", "fp8"}))
      ->capture_default_str();
  command->add_option("--shard-size-mb", options->shard_mb, "Largest safetensors shard in MB (HF default 5000; a GGUF is one file)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 30))
      ->capture_default_str();
  command->add_option("--threads", options->checkpoint.threads, "Writer threads")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  command->add_flag("--force", options->checkpoint.force, "Replace OUT if it exists");
  command->add_option("--tokenizer-json", options->tokenizer_json, "Use this tokenizer.json instead of the built-in one")
      ->check(CLI::ExistingFile);
  command->add_option("--tokenizer-config-json", options->tokenizer_config_json,
                      "Use this tokenizer_config.json instead of the built-in one")
      ->check(CLI::ExistingFile);
  command->add_option("--chat-template", options->chat_template,
                      "Use this chat template instead of the built-in Qwen3.5 (9B/27B) one")
      ->check(CLI::ExistingFile);
  return [options] { return run_make_checkpoint(*options); };
}

}  // namespace ds::app
