// Random checkpoint writer: weight table -> shards -> parallel fill of mmapped files.
// Normal draws come from a 2^16-entry inverse-CDF table (exact quantiles at bin centres): fast
// enough to write gigabytes in seconds, and plenty for random weights.
#include "model/random_checkpoint.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

#include "io/generation_config.h"
#include "io/model_config.h"
#include "io/safetensors_writer.h"
#include "kernels/formats/fp8/block_fp8.h"
#include "kernels/formats/fp8/fp8_quantize.h"
#include "model/gguf_export.h"
#include "model/shape_presets.h"
#include "model/visible_text.h"
#include "model/weight_spec.h"
#include "util/float16.h"
#include "util/human.h"
#include "util/log.h"
#include "util/parallel_ranges.h"
#include "util/progress.h"
#include "util/random.h"
#include "util/str_cat.h"
#include "tokenizer/gguf_tokenizer.h"

namespace ds {
namespace fs = std::filesystem;
namespace {

constexpr uint64_t kChunkElements = 1 << 20;  // work item size: 1 Mi elements

// Standard normal quantiles at (i + 0.5) / 65536, by bisection on erfc (start-up only).
const std::vector<float>& normal_quantiles() {
  static const std::vector<float> table = [] {
    std::vector<float> values(65536);
    for (size_t i = 0; i < values.size(); ++i) {
      const double p = (static_cast<double>(i) + 0.5) / 65536.0;
      double lo = -10.0, hi = 10.0;
      for (int iter = 0; iter < 60; ++iter) {
        const double mid = 0.5 * (lo + hi);
        (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
      }
      values[i] = static_cast<float>(0.5 * (lo + hi));
    }
    return values;
  }();
  return table;
}

struct Sampler {
  WeightInit init;
  const float* quantiles;
  float operator()(Xoshiro256& rng, uint16_t bits) const {
    const float normal = quantiles[bits];
    switch (init) {
      case WeightInit::normal:
      case WeightInit::bias: return 0.02f * normal;
      case WeightInit::centred_norm: return 0.1f * normal;
      case WeightInit::plain_norm: return 1.0f + 0.1f * normal;
      case WeightInit::conv: return rng.uniform() - 0.5f;
      case WeightInit::a_log: return std::log(1.0f + 15.0f * rng.uniform());
      case WeightInit::dt_bias: return 2.0f * rng.uniform() - 1.0f;
    }
    return 0.0f;
  }
};

// The values of chunk `chunk` (elements [chunk · kChunkElements, …) of tensor `name`, as many as
// `out` holds): a function of the seed, the name and the chunk only.
void chunk_values(uint64_t seed, const std::string& name, uint64_t chunk, WeightInit init, std::span<float> out) {
  seed ^= hash_name(name);
  seed ^= splitmix64(seed) + chunk;
  Xoshiro256 rng(splitmix64(seed));
  const Sampler sample{init, normal_quantiles().data()};
  uint64_t bits = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (i % 4 == 0) bits = rng.next();
    out[i] = sample(rng, static_cast<uint16_t>(bits >> (16 * (i % 4))));
  }
}

// A value as `dtype` stores it.
float stored_value(float value, DType dtype) {
  if (dtype == DType::BF16) return bf16_to_float(float_to_bf16(value));
  if (dtype == DType::F16) return fp16_to_float(float_to_fp16(value));
  return value;
}

void store_values(std::span<const float> values, DType dtype, std::byte* out) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::F32) {
      std::memcpy(out + 4 * i, &values[i], 4);
    } else {
      const uint16_t half = dtype == DType::BF16 ? float_to_bf16(values[i]) : float_to_fp16(values[i]);
      std::memcpy(out + 2 * i, &half, 2);
    }
  }
}

// What make-checkpoint does with the table and options: the layout's names, which tensors exist.
struct Layout {
  ModelConfig config;
  WeightTableOptions table_options;
  std::vector<WeightSpec> table;
};

Result<Layout> layout_of(const nlohmann::ordered_json& config_json, const RandomCheckpointOptions& options) {
  if (options.dtype != DType::BF16 && options.dtype != DType::F16 && options.dtype != DType::F32 &&
      options.dtype != DType::F8_E4M3)
    return Status::errorf("--dtype: expected bf16, f16, f32 or fp8, found ", dtype_name(options.dtype));
  Layout layout;
  DS_ASSIGN_OR_RETURN(layout.config, parse_model_config(config_json.dump(), "config.json to write"));
  layout.table_options.text_prefix = layout.config.nested ? kNestedTextPrefix : kFlatTextPrefix;
  layout.table_options.lm_head = !layout.config.tie_word_embeddings;
  layout.table_options.vision = layout.config.vision.has_value();
  layout.table_options.mtp = options.with_mtp;
  layout.table = qwen35_weight_table(layout.config, layout.table_options);
  return layout;
}

// Each tensor is stored in what a released file stores (F32 for A_log and the gated norm) unless
// another dtype is asked for. Block FP8 (`--dtype fp8`): the Linears Qwen converts as F8_E4M3 codes,
// everything else BF16, A_log and the gated norm too (Qwen3.6's -FP8 files).
DType stored_dtype(const WeightSpec& spec, const RandomCheckpointOptions& options) {
  if (options.dtype == DType::F8_E4M3) return spec.block_fp8_in_release ? DType::F8_E4M3 : DType::BF16;
  return options.dtype == DType::BF16 ? spec.stored_dtype : options.dtype;
}

Status write_text_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) return Status::errorf("cannot write ", path.string());
  return {};
}

struct Shard {
  std::string file_name;
  std::vector<TensorDecl> tensors;
  std::vector<WeightInit> inits;
  // Block FP8 (`--dtype fp8`): tensor i holds codes whose scales are tensor i + 1.
  std::vector<bool> fp8_codes;
  uint64_t bytes = 0;
};

// The config of a block-FP8 release (Qwen's -FP8 files): quantization_config with the modules kept in
// BF16 named as Qwen's list names them (module paths; A_log and dt_bias as parameters).
nlohmann::ordered_json fp8_quantization_config(const std::vector<WeightSpec>& table) {
  nlohmann::ordered_json skipped = nlohmann::ordered_json::array();
  std::set<std::string> seen;
  for (const WeightSpec& spec : table) {
    if (spec.block_fp8_in_release) continue;
    std::string module = spec.name;
    for (const char* suffix : {".weight", ".bias"})
      if (module.ends_with(suffix)) module.resize(module.size() - std::strlen(suffix));
    if (seen.insert(module).second) skipped.push_back(module);
  }
  return {{"activation_scheme", "dynamic"},
          {"fmt", "e4m3"},
          {"quant_method", "fp8"},
          {"weight_block_size", {kFp8Block, kFp8Block}},
          {"modules_to_not_convert", skipped}};
}

// Writes one block-FP8 weight: its bf16 values drawn exactly as a bf16 checkpoint of the same seed has
// them (visible-text edits included), then quantised per 128 × 128 block (fp8_quantize.h) into
// `codes` [n, k] and BF16 `scales` [ceil(n / 128), ceil(k / 128)] (Qwen stores BF16 scales).
void write_fp8_weight(const TensorDecl& decl, WeightInit init, uint64_t seed, int threads,
                      const std::function<void(std::span<std::byte>)>& edit, std::span<std::byte> codes,
                      std::span<std::byte> scales, Progress& progress) {
  const int64_t n = decl.shape[0], k = decl.shape[1];
  std::vector<std::byte> values(static_cast<size_t>(2 * n * k));  // [n, k] bf16
  const uint64_t chunks = (static_cast<uint64_t>(n * k) + kChunkElements - 1) / kChunkElements;
  parallel_ranges(chunks, threads, [&](size_t begin, size_t end) {
    std::vector<float> chunk(kChunkElements);  // one chunk's values
    for (size_t c = begin; c < end; ++c) {
      const uint64_t first = c * kChunkElements, size = std::min<uint64_t>(kChunkElements, static_cast<uint64_t>(n * k) - first);
      chunk_values(seed, decl.name, c, init, std::span<float>(chunk.data(), size));
      store_values(std::span<const float>(chunk.data(), size), DType::BF16, values.data() + 2 * first);
    }
  });
  edit(values);
  const int64_t column_blocks = fp8_blocks(k);
  parallel_ranges(static_cast<size_t>(fp8_blocks(n)), threads, [&](size_t begin, size_t end) {
    std::vector<float> rows(static_cast<size_t>(kFp8Block * k));  // [≤ 128, k] one row of blocks
    std::vector<float> inverse(static_cast<size_t>(column_blocks));
    for (size_t b = begin; b < end; ++b) {
      const int64_t r0 = static_cast<int64_t>(b) * kFp8Block, count = std::min(kFp8Block, n - r0);
      for (int64_t i = 0; i < count * k; ++i) {
        uint16_t bits;
        std::memcpy(&bits, values.data() + 2 * (r0 * k + i), 2);
        rows[i] = bf16_to_float(bits);
      }
      fp8_quantize_block_row(rows.data(), count, k, reinterpret_cast<uint8_t*>(codes.data()) + r0 * k, inverse.data());
      for (int64_t c = 0; c < column_blocks; ++c) {
        const uint16_t bits = float_to_bf16(inverse[c]);
        std::memcpy(scales.data() + 2 * (static_cast<int64_t>(b) * column_blocks + c), &bits, 2);
      }
      progress.advance(static_cast<uint64_t>(count * k));
    }
  });
}

}  // namespace

Status write_random_checkpoint(const nlohmann::ordered_json& config_json, const RandomCheckpointOptions& options,
                               const TokenizerAssets& assets) {
  DS_ASSIGN_OR_RETURN(const Layout layout, layout_of(config_json, options));
  const ModelConfig& config = layout.config;
  const WeightTableOptions& table_options = layout.table_options;
  const std::vector<WeightSpec>& table = layout.table;
  const fs::path out_dir(options.out_dir);
  const fs::path partial_dir = out_dir.string() + ".partial";
  std::error_code error;
  if (fs::exists(out_dir, error) && !fs::is_empty(out_dir, error) && !options.force)
    return Status::errorf(out_dir.string(), " already exists and is not empty (use --force to replace it)");
  fs::remove_all(partial_dir, error);
  if (!fs::create_directories(partial_dir, error))
    return Status::errorf("cannot create ", partial_dir.string(), ": ", error.message());

  // Split into shards in table order, like save_pretrained's size-capped sharding. A block-FP8
  // weight and its scales go into one shard, the scales right after the codes.
  const bool fp8 = options.dtype == DType::F8_E4M3;
  std::vector<Shard> shards(1);
  uint64_t total_bytes = 0;
  for (const WeightSpec& spec : table) {
    const DType dtype = stored_dtype(spec, options);
    std::vector<TensorDecl> decls{TensorDecl{spec.name, dtype, spec.shape}};
    if (dtype == DType::F8_E4M3)
      decls.push_back(TensorDecl{spec.name + "_scale_inv", DType::BF16, {fp8_blocks(spec.shape[0]), fp8_blocks(spec.shape[1])}});
    uint64_t bytes = 0;
    for (const TensorDecl& decl : decls) bytes += decl.nbytes();
    if (shards.back().bytes > 0 && shards.back().bytes + bytes > options.max_shard_bytes) shards.emplace_back();
    for (TensorDecl& decl : decls) {
      shards.back().tensors.push_back(std::move(decl));
      shards.back().inits.push_back(spec.init);
      shards.back().fp8_codes.push_back(shards.back().tensors.back().dtype == DType::F8_E4M3);
    }
    shards.back().bytes += bytes;
    total_bytes += bytes;
  }
  for (size_t i = 0; i < shards.size(); ++i) {
    char name[64];
    std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", i + 1, shards.size());
    shards[i].file_name = shards.size() == 1 ? "model.safetensors" : name;
  }
  size_t tensors = 0;
  for (const Shard& shard : shards) tensors += shard.tensors.size();
  log::info("make-checkpoint: ", config.nested ? "released" : "text-only", " layout", fp8 ? " in block FP8" : "", ", ", tensors,
            " tensors, ", human_bytes(total_bytes), " in ",
            shards.size(), " file(s), seed ", options.seed, ", ", options.threads, " thread(s)");

  const auto produced =
      options.visible_text ? producible_ids(assets.tokenizer_json, config.text.vocab_size) : std::nullopt;

  Progress progress("writing weights", total_bytes, /*bytes_unit=*/true);
  nlohmann::ordered_json weight_map = nlohmann::ordered_json::object();
  for (const Shard& shard : shards) {
    DS_ASSIGN_OR_RETURN(SafetensorsWriter writer,
                        SafetensorsWriter::create((partial_dir / shard.file_name).string(), shard.tensors, {{"format", "pt"}}));
    struct WorkItem {
      size_t tensor;
      uint64_t chunk;
    };
    std::vector<WorkItem> work;
    for (size_t t = 0; t < shard.tensors.size(); ++t) {
      weight_map[shard.tensors[t].name] = shard.file_name;
      if (shard.fp8_codes[t] || (t > 0 && shard.fp8_codes[t - 1])) continue;  // block FP8: below
      const uint64_t chunks = (shard.tensors[t].nbytes() / dtype_size(shard.tensors[t].dtype) + kChunkElements - 1) / kChunkElements;
      for (uint64_t c = 0; c < chunks; ++c) work.push_back({t, c});
    }
    parallel_ranges(work.size(), options.threads, [&](size_t begin, size_t end) {
      std::vector<float> values(kChunkElements);
      for (size_t w = begin; w < end; ++w) {
        const TensorDecl& decl = shard.tensors[work[w].tensor];
        const size_t element = dtype_size(decl.dtype);
        std::span<std::byte> bytes = writer.data(work[w].tensor);
        const uint64_t first = work[w].chunk * kChunkElements * element;
        const uint64_t size = std::min<uint64_t>(kChunkElements * element, bytes.size() - first);
        const std::span<float> chunk(values.data(), size / element);
        chunk_values(options.seed, decl.name, work[w].chunk, shard.inits[work[w].tensor], chunk);
        store_values(chunk, decl.dtype, bytes.data() + first);
        progress.advance(size);
      }
    });
    for (size_t t = 0; t < shard.tensors.size(); ++t) {
      const TensorDecl& decl = shard.tensors[t];
      auto edit = [&](std::span<std::byte> bytes) {
        if (produced)
          make_text_visible(decl.name, decl.shape, shard.fp8_codes[t] ? DType::BF16 : decl.dtype, bytes,
                            table_options.text_prefix, config.tie_word_embeddings, *produced);
      };
      if (shard.fp8_codes[t])
        write_fp8_weight(decl, shard.inits[t], options.seed, options.threads, edit, writer.data(t), writer.data(t + 1), progress);
      else if (t == 0 || !shard.fp8_codes[t - 1])
        edit(writer.data(t));
    }
    DS_TRY(writer.close());
  }
  progress.finish();

  if (shards.size() > 1) {
    const nlohmann::ordered_json index = {{"metadata", {{"total_size", total_bytes}}}, {"weight_map", weight_map}};
    DS_TRY(write_text_file(partial_dir / "model.safetensors.index.json", index.dump(2) + "\n"));
  }
  nlohmann::ordered_json written_config = config_json;
  if (fp8) written_config["quantization_config"] = fp8_quantization_config(table);
  DS_TRY(write_text_file(partial_dir / "config.json", written_config.dump(2) + "\n"));
  DS_TRY(write_text_file(partial_dir / "generation_config.json", preset_generation_config_json().dump(2) + "\n"));
  if (table_options.vision)
    DS_TRY(write_text_file(partial_dir / "preprocessor_config.json", preset_preprocessor_config_json().dump(2) + "\n"));
  DS_TRY(write_text_file(partial_dir / "tokenizer.json", assets.tokenizer_json));
  DS_TRY(write_text_file(partial_dir / "tokenizer_config.json", assets.tokenizer_config_json));
  DS_TRY(write_text_file(partial_dir / "chat_template.jinja", assets.chat_template));
  // What made these weights, so a tool can tell this checkpoint from a real one and from one an
  // older version made (scripts/quickstart.sh remakes a default model without visible text).
  const nlohmann::ordered_json made = {{"random_weights", true}, {"deltaserve_version", DELTASERVE_VERSION},
                                       {"seed", options.seed}, {"visible_text", produced.has_value()}};
  DS_TRY(write_text_file(partial_dir / "deltaserve_random.json", made.dump(2) + "\n"));

  fs::remove_all(out_dir, error);
  fs::rename(partial_dir, out_dir, error);
  if (error) return Status::errorf("cannot rename ", partial_dir.string(), " to ", out_dir.string(), ": ", error.message());
  log::info("make-checkpoint: wrote ", out_dir.string());
  return {};
}

Status write_random_gguf(const nlohmann::ordered_json& config_json, const RandomCheckpointOptions& options,
                         const std::string& path, GgufFileType file_type, const TokenizerAssets& assets) {
  if (options.dtype == DType::F8_E4M3)
    return Status::errorf("--dtype fp8 writes Qwen's block-FP8 safetensors layout; a GGUF file takes --gguf-type (e.g. Q8_0)");
  DS_ASSIGN_OR_RETURN(const Layout layout, layout_of(config_json, options));
  const TextConfig& text = layout.config.text;
  std::error_code error;
  if (fs::exists(path, error) && !options.force) return Status::errorf(path, " already exists (use --force to replace it)");

  GgufExportOptions gguf;
  gguf.path = path;
  gguf.file_type = file_type;
  gguf.name = str_cat("deltaserve random checkpoint (seed ", options.seed, ")");
  gguf.threads = options.threads;
  DS_TRY(set_gguf_tokenizer(assets.tokenizer_json, assets.tokenizer_config_json, assets.chat_template, text.vocab_size,
                            gguf.metadata));
  // The sampling defaults the directory layout's generation_config.json holds, as the converter carries them.
  DS_ASSIGN_OR_RETURN(const GenerationConfig generation,
                      parse_generation_config(preset_generation_config_json().dump(), "the preset generation_config.json"));
  set_gguf_generation_config(generation, gguf.metadata);
  // What made these weights (the safetensors checkpoint's deltaserve_random.json).
  const auto produced = options.visible_text ? producible_ids(assets.tokenizer_json, text.vocab_size) : std::nullopt;
  gguf.metadata.set_number<bool>("deltaserve.random_weights", true);
  gguf.metadata.set_string("deltaserve.version", DELTASERVE_VERSION);
  gguf.metadata.set_number<uint64_t>("deltaserve.seed", options.seed);
  gguf.metadata.set_number<bool>("deltaserve.visible_text", produced.has_value());
  log::info("make-checkpoint: GGUF ", gguf_file_type_name(file_type), " of the ", layout.config.nested ? "released" : "text-only",
            " layout's values, seed ", options.seed);

  // Elements [begin, end) of a tensor, exactly as write_random_checkpoint stores them: the chunks
  // that hold them drawn, the visible-text edits applied, rounded to the stored dtype.
  const std::string& prefix = layout.table_options.text_prefix;
  auto source = [&](const WeightSpec& spec, uint64_t begin, uint64_t end, float* out) {
    uint64_t numel = 1;
    for (int64_t n : spec.shape) numel *= static_cast<uint64_t>(n);
    std::vector<float> chunk(kChunkElements);
    for (uint64_t c = begin / kChunkElements; c * kChunkElements < end; ++c) {
      const uint64_t first = c * kChunkElements, size = std::min<uint64_t>(kChunkElements, numel - first);
      chunk_values(options.seed, spec.name, c, spec.init, std::span<float>(chunk.data(), size));
      const uint64_t from = std::max(begin, first), to = std::min(end, first + size);
      std::copy(chunk.begin() + static_cast<int64_t>(from - first), chunk.begin() + static_cast<int64_t>(to - first),
                out + (from - begin));
    }
    if (produced)
      visible_text_edits(spec.name, spec.shape, prefix, layout.config.tie_word_embeddings, *produced, [&](int64_t index, float value) {
        if (static_cast<uint64_t>(index) >= begin && static_cast<uint64_t>(index) < end) out[static_cast<uint64_t>(index) - begin] = value;
      });
    const DType dtype = stored_dtype(spec, options);
    for (uint64_t i = 0; i < end - begin; ++i) out[i] = stored_value(out[i], dtype);
  };
  DS_TRY(write_gguf(layout.config, layout.table, prefix, source, gguf));
  log::info("make-checkpoint: wrote ", path);
  return {};
}

}  // namespace ds
