// GGUF export: plan each tensor (name, ggml shape and type, where its value heads go), cut it into
// pieces of whole rows, and convert, encode and write the pieces on `threads` threads.
#include "model/gguf_export.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>

#include "model/gguf_config.h"
#include "util/human.h"
#include "util/log.h"
#include "util/parallel_ranges.h"
#include "util/progress.h"

namespace ds {
namespace {

constexpr int64_t kPieceValues = int64_t{1} << 23;  // values per piece: 32 MiB of fp32 per thread
constexpr uint32_t kQuantizationVersion = 2;       // GGML_QNT_VERSION

// Where a tensor's value heads move under tiling (gguf_tensor_map.h). `rows`: runs of `unit` GGUF
// rows from row `first` (in_proj_qkv, in_proj_z, in_proj_a/b, conv1d); `columns`: runs of `unit`
// values within every row (out_proj's columns; the values of 1-D A_log and dt_bias).
struct Tiling {
  enum Kind { none, rows, columns } kind = none;
  int64_t first = 0, unit = 0;
};

struct Planned {
  const WeightSpec* spec;
  GgufTensorName name;
  Tiling tiling;
  int64_t rows, cols;  // GGUF rows, values per row (ggml shape[0])
};

struct Piece {
  size_t tensor;
  int64_t row_begin, row_end;
};

Result<Planned> plan(const WeightSpec& spec, GgufTensorName name, const TextConfig& c) {
  Planned p{&spec, std::move(name), {}, 0, 0};
  int64_t numel = 1;
  for (int64_t n : spec.shape) numel *= n;
  p.cols = spec.shape.back();  // conv1d [C, 1, K]: C rows of K taps
  p.rows = numel / std::max<int64_t>(p.cols, 1);
  const int64_t nK = c.linear_num_key_heads, nV = c.linear_num_value_heads;
  if (nV == nK) return p;
  switch (p.name.conversion) {
    case GgufConversion::ssm_a: case GgufConversion::head_rows: case GgufConversion::qkv_rows: case GgufConversion::conv: {
      DS_ASSIGN_OR_RETURN(const ValueHeadRows heads, value_head_rows(p.name.conversion, c, spec.shape[0], spec.name));
      p.tiling = spec.shape.size() == 1 ? Tiling{Tiling::columns, heads.first_row, heads.rows_per_head}
                                        : Tiling{Tiling::rows, heads.first_row, heads.rows_per_head};
      break;
    }
    case GgufConversion::head_columns:
      if (p.cols != nV * c.linear_value_head_dim)
        return Status::errorf("tensor \"", spec.name, "\": expected ", nV * c.linear_value_head_dim,
                              " columns (value heads × head size), found ", p.cols);
      p.tiling = {Tiling::columns, 0, c.linear_value_head_dim};
      break;
    default: break;
  }
  return p;
}

// GGUF shape (ggml order) of a planned tensor: HF's reversed; conv1d [C, 1, K] squeezed to [K, C].
std::vector<int64_t> ggml_shape(const Planned& p) {
  if (p.name.conversion == GgufConversion::conv) return {p.cols, p.rows};
  return std::vector<int64_t>(p.spec->shape.rbegin(), p.spec->shape.rend());
}

// Pieces of whole rows; a tensor tiled by rows is cut at its first value row and at head boundaries.
void add_pieces(size_t index, const Planned& p, std::vector<Piece>& pieces) {
  const int64_t per_piece = std::max<int64_t>(1, kPieceValues / std::max<int64_t>(p.cols, 1));
  auto cut = [&](int64_t begin, int64_t end, int64_t step) {
    for (int64_t r = begin; r < end; r += step) pieces.push_back({index, r, std::min(end, r + step)});
  };
  if (p.tiling.kind != Tiling::rows) return cut(0, p.rows, per_piece);
  cut(0, p.tiling.first, per_piece);
  cut(p.tiling.first, p.rows, std::max<int64_t>(1, per_piece / p.tiling.unit) * p.tiling.unit);
}

class Exporter {
 public:
  Exporter(const TextConfig& c, HfValueSource source, GgufWriter& writer, Progress& progress)
      : c_(c), source_(source), writer_(writer), progress_(progress) {}

  Status run(const Planned& p, size_t index, const Piece& piece) const {
    const GgufTensorDecl& decl = writer_.tensors()[index];
    const int64_t n_rows = piece.row_end - piece.row_begin;
    std::vector<float> values(static_cast<size_t>(n_rows * p.cols));  // [n_rows, cols] HF order
    source_(*p.spec, static_cast<uint64_t>(piece.row_begin * p.cols), static_cast<uint64_t>(piece.row_end * p.cols),
            values.data());
    convert_values(p, values);
    if (p.tiling.kind == Tiling::columns) tile_columns(p, values);

    const uint64_t row_bytes = decl.row_bytes();
    std::vector<std::byte> bytes(static_cast<size_t>(n_rows) * row_bytes);  // [n_rows] encoded rows
    for (int64_t r = 0; r < n_rows; ++r)
      encode_gguf_row(decl.type, values.data() + r * p.cols, p.cols, bytes.data() + r * row_bytes);

    // Rows go where the file keeps them: in place, or each value head at its tiled position.
    int64_t r = 0;
    while (r < n_rows) {
      const int64_t row = piece.row_begin + r;
      int64_t run = n_rows - r, to = row;
      if (p.tiling.kind == Tiling::rows && row >= p.tiling.first) {
        const int64_t head = (row - p.tiling.first) / p.tiling.unit, within = (row - p.tiling.first) % p.tiling.unit;
        run = std::min(run, p.tiling.unit - within);
        to = p.tiling.first + gguf_head_of(head, c_.linear_num_key_heads, c_.linear_num_value_heads) * p.tiling.unit + within;
      } else if (p.tiling.kind == Tiling::rows) {
        run = std::min(run, p.tiling.first - row);
      }
      const std::span<const std::byte> out(bytes.data() + r * row_bytes, static_cast<size_t>(run) * row_bytes);
      DS_TRY(writer_.write(index, static_cast<uint64_t>(to) * row_bytes, out));
      r += run;
    }
    progress_.advance(bytes.size());
    return {};
  }

 private:
  // What the converter computes on the values (conversion/qwen.py), in fp32.
  static void convert_values(const Planned& p, std::vector<float>& values) {
    if (p.name.conversion == GgufConversion::centred_norm)
      for (float& v : values) v += 1.0f;
    if (p.name.conversion == GgufConversion::ssm_a)
      for (float& v : values) v = -std::exp(v);
  }
  // Within each row, value head runs of `unit` values from `first` move to their tiled positions.
  void tile_columns(const Planned& p, std::vector<float>& values) const {
    const int64_t nK = c_.linear_num_key_heads, nV = c_.linear_num_value_heads, unit = p.tiling.unit;
    std::vector<float> hf(static_cast<size_t>(nV * unit));  // [nV, unit] one row's heads, grouped order
    for (size_t row = 0; row < values.size(); row += static_cast<size_t>(p.cols)) {
      float* heads = values.data() + row + p.tiling.first;
      std::copy(heads, heads + nV * unit, hf.begin());
      for (int64_t t = 0; t < nV; ++t)
        std::copy_n(hf.begin() + hf_head_of(t, nK, nV) * unit, unit, heads + t * unit);
    }
  }

  const TextConfig& c_;
  HfValueSource source_;
  GgufWriter& writer_;
  Progress& progress_;
};

}  // namespace

Status write_gguf(const ModelConfig& config, const std::vector<WeightSpec>& table, std::string_view hf_text_prefix,
                  HfValueSource source, const GgufExportOptions& options) {
  const TextConfig& c = config.text;
  // The MTP head, when the table has it, as the converter writes it: nextn blocks after the text
  // layers, counted in block_count — which llama-quantize's mixes also count (n_layer_all).
  const bool mtp = std::any_of(table.begin(), table.end(), [](const WeightSpec& s) { return s.part == WeightPart::mtp; });
  const int64_t nextn_layers = mtp ? c.mtp_num_hidden_layers : 0;
  const int64_t blocks = c.num_hidden_layers + nextn_layers;
  std::vector<Planned> planned;
  std::vector<GgufTensorDecl> decls;
  for (const WeightSpec& spec : table) {
    if (spec.part == WeightPart::vision) continue;
    std::optional<GgufTensorName> name = hf_to_gguf_name(spec.name, hf_text_prefix, c.num_hidden_layers);
    if (!name) return Status::internal("tensor \"", spec.name, "\" has no GGUF name (gguf_tensor_map.cpp)");
    DS_ASSIGN_OR_RETURN(Planned p, plan(spec, std::move(*name), c));
    const std::vector<int64_t> shape = ggml_shape(p);
    decls.push_back({p.name.gguf, shape, gguf_tensor_type(options.file_type, p.name, shape, blocks, config.tie_word_embeddings)});
    planned.push_back(std::move(p));
  }

  GgufMetadata metadata;
  metadata.set_string("general.architecture", "qwen35");
  metadata.set_string("general.type", "model");
  if (!options.name.empty()) metadata.set_string("general.name", options.name);
  set_gguf_model_config(c, metadata, nextn_layers);
  metadata.set_number<uint32_t>("general.file_type", llama_ftype_of(options.file_type));
  metadata.set_number<uint32_t>("general.quantization_version", kQuantizationVersion);
  for (const auto& [key, value] : options.metadata.entries()) metadata.set(key, value);

  DS_ASSIGN_OR_RETURN(GgufWriter writer, GgufWriter::create(options.path, metadata, decls));
  std::vector<Piece> pieces;
  uint64_t total = 0;
  for (size_t i = 0; i < planned.size(); ++i) {
    add_pieces(i, planned[i], pieces);
    total += writer.tensors()[i].bytes();
  }
  log::info("gguf: ", options.path, ": ", gguf_file_type_name(options.file_type), ", ", planned.size(), " tensors, ",
            human_bytes(writer.file_bytes()), ", ", options.threads, " thread(s)");

  Progress progress("writing " + options.path, total, /*bytes_unit=*/true);
  const Exporter exporter(c, source, writer, progress);
  std::atomic<size_t> next{0};
  std::mutex error_mutex;
  Status error;
  const int threads = std::max(1, options.threads);
  parallel_ranges(static_cast<size_t>(threads), threads, [&](size_t, size_t) {
    for (size_t i; (i = next++) < pieces.size();) {
      const Status status = exporter.run(planned[pieces[i].tensor], pieces[i].tensor, pieces[i]);
      if (status.ok()) continue;
      std::lock_guard lock(error_mutex);
      if (error.ok()) error = status;
      next = pieces.size();  // the other threads stop after their piece
    }
  });
  DS_TRY(error);
  progress.finish();
  return writer.close();
}

}  // namespace ds
