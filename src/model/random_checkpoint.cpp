// Random checkpoint writer: weight table -> shards -> parallel fill of mmapped files.
// Normal draws come from a 2^16-entry inverse-CDF table (exact quantiles at bin centres): fast
// enough to write gigabytes in seconds, and plenty for random weights.
#include "model/random_checkpoint.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "io/model_config.h"
#include "io/safetensors_writer.h"
#include "model/shape_presets.h"
#include "model/visible_text.h"
#include "model/weight_spec.h"
#include "util/float16.h"
#include "util/human.h"
#include "util/log.h"
#include "util/parallel_for.h"
#include "util/progress.h"
#include "util/random.h"

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

void fill_chunk(std::span<std::byte> bytes, DType dtype, WeightInit init, uint64_t seed) {
  Xoshiro256 rng(seed);
  const Sampler sample{init, normal_quantiles().data()};
  const size_t count = bytes.size() / dtype_size(dtype);
  uint64_t bits = 0;
  for (size_t i = 0; i < count; ++i) {
    if (i % 4 == 0) bits = rng.next();
    const float value = sample(rng, static_cast<uint16_t>(bits >> (16 * (i % 4))));
    if (dtype == DType::F32) {
      std::memcpy(bytes.data() + 4 * i, &value, 4);
    } else {
      const uint16_t half = dtype == DType::BF16 ? float_to_bf16(value) : float_to_fp16(value);
      std::memcpy(bytes.data() + 2 * i, &half, 2);
    }
  }
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
  uint64_t bytes = 0;
};

}  // namespace

Status write_random_checkpoint(const nlohmann::ordered_json& config_json, const RandomCheckpointOptions& options,
                               const TokenizerAssets& assets) {
  if (options.dtype != DType::BF16 && options.dtype != DType::F16 && options.dtype != DType::F32)
    return Status::errorf("--dtype: expected bf16, f16 or f32, found ", dtype_name(options.dtype));
  const fs::path out_dir(options.out_dir);
  const fs::path partial_dir = out_dir.string() + ".partial";
  std::error_code error;
  if (fs::exists(out_dir, error) && !fs::is_empty(out_dir, error) && !options.force)
    return Status::errorf(out_dir.string(), " already exists and is not empty (use --force to replace it)");
  fs::remove_all(partial_dir, error);
  if (!fs::create_directories(partial_dir, error))
    return Status::errorf("cannot create ", partial_dir.string(), ": ", error.message());

  DS_ASSIGN_OR_RETURN(const ModelConfig config, parse_model_config(config_json.dump(), "config.json to write"));
  WeightTableOptions table_options;
  table_options.text_prefix = config.nested ? kNestedTextPrefix : kFlatTextPrefix;
  table_options.lm_head = !config.tie_word_embeddings;
  table_options.vision = config.vision.has_value();
  table_options.mtp = options.with_mtp;
  const std::vector<WeightSpec> table = qwen35_weight_table(config, table_options);

  // Split into shards in table order, like save_pretrained's size-capped sharding.
  std::vector<Shard> shards(1);
  uint64_t total_bytes = 0;
  for (const WeightSpec& spec : table) {
    const DType dtype = options.dtype == DType::BF16 ? spec.stored_dtype : options.dtype;
    TensorDecl decl{spec.name, dtype, spec.shape};
    if (shards.back().bytes > 0 && shards.back().bytes + decl.nbytes() > options.max_shard_bytes) shards.emplace_back();
    shards.back().bytes += decl.nbytes();
    shards.back().tensors.push_back(std::move(decl));
    shards.back().inits.push_back(spec.init);
    total_bytes += shards.back().tensors.back().nbytes();
  }
  for (size_t i = 0; i < shards.size(); ++i) {
    char name[64];
    std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", i + 1, shards.size());
    shards[i].file_name = shards.size() == 1 ? "model.safetensors" : name;
  }
  log::info("make-checkpoint: ", config.nested ? "released" : "text-only", " layout, ", table.size(), " tensors, ", human_bytes(total_bytes), " in ",
            shards.size(), " file(s), seed ", options.seed, ", ", options.threads, " thread(s)");

  const auto produced = producible_ids(assets.tokenizer_json, config.text.vocab_size);

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
      const uint64_t chunks = (shard.tensors[t].nbytes() / dtype_size(shard.tensors[t].dtype) + kChunkElements - 1) / kChunkElements;
      for (uint64_t c = 0; c < chunks; ++c) work.push_back({t, c});
      weight_map[shard.tensors[t].name] = shard.file_name;
    }
    parallel_for(work.size(), options.threads, [&](size_t begin, size_t end) {
      for (size_t w = begin; w < end; ++w) {
        const TensorDecl& decl = shard.tensors[work[w].tensor];
        const size_t element = dtype_size(decl.dtype);
        std::span<std::byte> bytes = writer.data(work[w].tensor);
        const uint64_t first = work[w].chunk * kChunkElements * element;
        const uint64_t size = std::min<uint64_t>(kChunkElements * element, bytes.size() - first);
        uint64_t seed = options.seed ^ hash_name(decl.name);
        seed ^= splitmix64(seed) + work[w].chunk;
        fill_chunk(bytes.subspan(first, size), decl.dtype, shard.inits[work[w].tensor], splitmix64(seed));
        progress.advance(size);
      }
    });
    for (size_t t = 0; produced && t < shard.tensors.size(); ++t)
      make_text_visible(shard.tensors[t].name, shard.tensors[t].shape, shard.tensors[t].dtype, writer.data(t),
                        table_options.text_prefix, config.tie_word_embeddings, *produced);
    DS_TRY(writer.close());
  }
  progress.finish();

  if (shards.size() > 1) {
    const nlohmann::ordered_json index = {{"metadata", {{"total_size", total_bytes}}}, {"weight_map", weight_map}};
    DS_TRY(write_text_file(partial_dir / "model.safetensors.index.json", index.dump(2) + "\n"));
  }
  DS_TRY(write_text_file(partial_dir / "config.json", config_json.dump(2) + "\n"));
  DS_TRY(write_text_file(partial_dir / "generation_config.json", preset_generation_config_json().dump(2) + "\n"));
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

}  // namespace ds
