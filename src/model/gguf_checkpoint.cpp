// GGUF → HF for qwen35: the name table, the reversed conversions, and the type policy (header).
#include "model/gguf_checkpoint.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>

#include "io/ggml_types.h"
#include "kernels/formats/weight_format.h"
#include "model/gguf_config.h"
#include "model/gguf_tensor_map.h"
#include "model/weight_arena.h"
#include "model/weight_spec.h"
#include "util/float16.h"
#include "util/str_cat.h"

namespace ds {
namespace {

constexpr const char* kSupportedTypes = "F32, F16, BF16, Q8_0, Q4_K, Q5_K, Q6_K, IQ4_XS";

std::optional<DType> stored_dtype(uint32_t type) {
  switch (type) {
    case kGgmlF32: return DType::F32;
    case kGgmlF16: return DType::F16;
    case kGgmlBF16: return DType::BF16;
    default: return std::nullopt;
  }
}

std::optional<WeightFormatId> block_format(uint32_t type) {
  switch (type) {
    case kGgmlQ8_0: return WeightFormatId::q8_0;
    case kGgmlQ4_K: return WeightFormatId::q4_k;
    case kGgmlQ5_K: return WeightFormatId::q5_k;
    case kGgmlQ6_K: return WeightFormatId::q6_k;
    case kGgmlIQ4_XS: return WeightFormatId::iq4_xs;
    default: return std::nullopt;
  }
}

// dst[h] = src[gguf_head_of(h)] over `heads` consecutive runs of `unit` bytes: tiled back to grouped.
void untile_heads(const std::byte* src, std::byte* dst, int64_t heads, int64_t key_heads, int64_t unit) {
  for (int64_t h = 0; h < heads; ++h)
    std::memcpy(dst + h * unit, src + gguf_head_of(h, key_heads, heads) * unit, static_cast<size_t>(unit));
}

// All values of a view (as the file stores it, in any supported type) as fp32: its format's
// reference dequantisation, row by row.
std::vector<float> values_of(const TensorView& view) {
  const auto n = static_cast<size_t>(view.numel());
  std::vector<float> out(n);  // [numel]
  const int64_t cols = view.shape.back(), rows = static_cast<int64_t>(n) / std::max<int64_t>(cols, 1);
  TensorView matrix = view;  // every dimension but the last folded into rows
  matrix.shape = {rows, cols};
  const WeightFormat& format = format_of(matrix);
  for (int64_t r = 0; r < rows; ++r) format.dequantize_row(matrix, r, out.data() + r * cols);
  return out;
}

// The F32 A_log whose std::exp is exactly −a, searched around the nearest log; else the nearest log.
float a_log_of(float a) {
  const float nearest = static_cast<float>(std::log(-static_cast<double>(a)));
  float down = nearest, up = nearest;
  for (int step = 0; step < 8; ++step) {
    if (-std::exp(down) == a) return down;
    if (-std::exp(up) == a) return up;
    down = std::nextafter(down, -INFINITY);
    up = std::nextafter(up, INFINITY);
  }
  return nearest;
}

}  // namespace

std::byte* GgufCheckpoint::own(uint64_t bytes) {
  owned_.push_back(std::make_unique<std::byte[]>(bytes));
  owned_bytes_.push_back(bytes);
  converted_bytes_ += bytes;
  return owned_.back().get();
}

uint64_t GgufCheckpoint::release_converted(const std::set<const std::byte*>& in_use) {
  uint64_t freed = 0;
  for (size_t i = 0; i < owned_.size(); ++i) {
    const std::byte* data = owned_[i].get();
    if (data == nullptr || in_use.count(data)) continue;
    for (auto& [_, view] : tensors_)
      if (view.data == data) view.data = nullptr;
    owned_[i].reset();
    freed += owned_bytes_[i];
  }
  converted_bytes_ -= freed;
  return freed;
}

Result<GgufCheckpoint> GgufCheckpoint::open(const std::string& path) {
  GgufCheckpoint checkpoint;
  DS_ASSIGN_OR_RETURN(GgufSet set, GgufSet::open(path));
  checkpoint.set_ = std::make_unique<GgufSet>(std::move(set));
  const GgufSet& files = *checkpoint.set_;
  const std::string label = std::filesystem::path(path).filename().string();
  DS_ASSIGN_OR_RETURN(checkpoint.config_, gguf_model_config(files, label));
  for (const auto& part : files.parts()) checkpoint.file_names_.push_back(part->name);
  for (const GgufSetTensor& tensor : files.tensors()) DS_TRY(checkpoint.add(tensor).with_context(label));
  DS_TRY(checkpoint.check_mtp_head().with_context(label));
  return checkpoint;
}

// Binding would name a missing head tensor by its HF name only; the file's reader needs the GGUF one.
Status GgufCheckpoint::check_mtp_head() const {
  const TextConfig& c = config_.text;
  if (c.mtp_num_hidden_layers == 0) return {};
  WeightTableOptions options;
  options.text_prefix = kGgufTextPrefix;
  options.mtp = true;
  for (const WeightSpec& spec : qwen35_weight_table(config_, options)) {
    if (spec.part != WeightPart::mtp || contains(spec.name)) continue;
    const std::optional<GgufTensorName> gguf = hf_to_gguf_name(spec.name, kGgufTextPrefix, c.num_hidden_layers);
    return Status::errorf("missing tensor \"", gguf ? gguf->gguf : "?", "\" (the MTP head's ", spec.name, ", ggml shape ",
                          shape_to_string(std::vector<int64_t>(spec.shape.rbegin(), spec.shape.rend())), "): qwen35.nextn_predict_layers is ",
                          c.mtp_num_hidden_layers, ", so blocks ", c.num_hidden_layers, "..", c.num_hidden_layers + c.mtp_num_hidden_layers - 1,
                          " must hold the whole head");
  }
  return {};
}

Status GgufCheckpoint::add(const GgufSetTensor& tensor) {
  const GgufTensor& info = *tensor.info;
  const TextConfig& c = config_.text;
  GgufTypeCount& count = type_counts_[info.type.name];
  count.tensors += 1;
  count.values += static_cast<uint64_t>(info.numel);
  count.bytes += info.bytes;

  const std::optional<GgufTensorName> mapped = gguf_to_hf_name(info.name, c.num_hidden_layers, kGgufTextPrefix);
  if (!mapped)
    return Status::errorf("unexpected tensor \"", info.name, "\" (no part of a ", c.num_hidden_layers,
                          "-layer qwen35 model or of its MTP head is stored under this name)");
  TensorView view;
  view.name = mapped->hf;
  view.shape.assign(info.shape.rbegin(), info.shape.rend());  // ggml order is innermost first
  view.data = tensor.data();
  view.nbytes = info.bytes;
  const std::optional<DType> dtype = stored_dtype(info.type.id);
  const std::optional<WeightFormatId> blocks = block_format(info.type.id);
  if (!dtype && !blocks)
    return Status::errorf("tensor \"", info.name, "\" (", view.name, "): ggml type ", info.type.name,
                          " is not supported yet (supported: ", kSupportedTypes, ")");
  view.dtype = dtype.value_or(DType::U8);
  if (blocks) view.format = *blocks;

  const int64_t nK = c.linear_num_key_heads, nV = c.linear_num_value_heads;
  const bool tiled = nV != nK;
  const int64_t rows = view.shape[0];  // ggml tensors have 1–4 dimensions
  const bool matrix = view.shape.size() == 2;

  // The converted values as fp32: written into an owned F32 tensor.
  auto set_f32 = [&](const std::vector<float>& values) {
    std::byte* out = own(values.size() * 4);
    std::memcpy(out, values.data(), values.size() * 4);
    view.data = out;
    view.nbytes = values.size() * 4;
    view.dtype = DType::F32;
    view.format = WeightFormatId::stored;
  };
  // Block types stay blocks where the model reads whole rows (matmul weights, the embedding table);
  // any other tensor in one is read element by element: expanded to F32, exactly (see the header).
  const bool embeddings = view.name == str_cat(kGgufTextPrefix, "embed_tokens.weight");
  const bool matmul = matrix && !embeddings && mapped->conversion != GgufConversion::conv;
  if (blocks && !matmul && !embeddings) set_f32(values_of(view));

  switch (mapped->conversion) {
    case GgufConversion::none: break;
    case GgufConversion::centred_norm: {
      std::vector<float> values = values_of(view);
      for (float& v : values) v -= 1.0f;
      set_f32(values);
      break;
    }
    case GgufConversion::ssm_a: {
      std::vector<float> stored = values_of(view);
      if (static_cast<int64_t>(stored.size()) != nV)
        return Status::errorf("tensor \"", info.name, "\": expected ", nV, " values (one per value head), found ", stored.size());
      std::vector<float> a_log(stored.size());  // [nV] grouped order
      for (int64_t h = 0; h < nV; ++h) {
        const float a = stored[static_cast<size_t>(gguf_head_of(h, nK, nV))];
        if (!(a < 0.0f) || !std::isfinite(a))
          return Status::errorf("tensor \"", info.name, "\"[", h, "] = ", a, ": expected −exp(A_log) < 0");
        a_log[static_cast<size_t>(h)] = a_log_of(a);
      }
      set_f32(a_log);
      break;
    }
    case GgufConversion::head_rows: case GgufConversion::qkv_rows: case GgufConversion::conv: {
      if (!tiled) break;
      DS_ASSIGN_OR_RETURN(const ValueHeadRows heads, value_head_rows(mapped->conversion, c, rows, info.name));
      const uint64_t row_bytes = view.nbytes / static_cast<uint64_t>(rows);
      std::byte* out = own(view.nbytes);
      std::memcpy(out, view.data, view.nbytes);
      untile_heads(view.data + heads.first_row * row_bytes, out + heads.first_row * row_bytes, nV, nK,
                   heads.rows_per_head * static_cast<int64_t>(row_bytes));
      view.data = out;
      break;
    }
    case GgufConversion::head_columns: {
      if (!tiled) break;
      const int64_t dV = c.linear_value_head_dim;
      if (!matrix || view.shape[1] != nV * dV)
        return Status::errorf("tensor \"", info.name, "\": expected ", nV * dV, " columns (value heads × head size), found shape ",
                              shape_to_string(view.shape));
      if (dV % info.type.block_size != 0) {
        // A block would span two value heads: the columns keep the file's order, and the model puts
        // its input in that order (Checkpoint::column_heads).
        std::vector<int32_t>& heads = column_heads_[view.name];
        for (int64_t t = 0; t < nV; ++t) heads.push_back(static_cast<int32_t>(hf_head_of(t, nK, nV)));
        break;
      }
      const uint64_t row_bytes = view.nbytes / static_cast<uint64_t>(rows);
      const std::byte* src = view.data;
      std::byte* out = own(view.nbytes);
      for (int64_t r = 0; r < rows; ++r)
        untile_heads(src + r * row_bytes, out + r * row_bytes, nV, nK, static_cast<int64_t>(row_bytes) / nV);
      view.data = out;
      break;
    }
  }
  if (mapped->conversion == GgufConversion::conv) view.shape = {view.shape[0], 1, view.shape[1]};
  view.owned = view.data != tensor.data();  // converted into memory this checkpoint holds
  if (view.owned) {
    // The converted copy is what the model reads: the file's pages it was made from need not stay
    // resident (on the 27B, the tiled in_proj_qkv / in_proj_z alone are 2.6 GB of Q4_K / Q6_K).
    TensorView source = view;
    source.data = tensor.data();
    source.nbytes = info.bytes;
    source.owned = false;
    release_source_pages(source);
  }
  tensors_[view.name] = view;
  return {};
}

}  // namespace ds
