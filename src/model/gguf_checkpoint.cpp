// GGUF → HF for qwen35: the name table, the reversed conversions, and the type policy (header).
#include "model/gguf_checkpoint.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>

#include "kernels/formats/q8_0/q8_0_format.h"
#include "model/gguf_config.h"
#include "util/float16.h"
#include "util/str_cat.h"

namespace ds {
namespace {

constexpr uint32_t kF32 = 0, kF16 = 1, kQ8_0 = 8, kBF16 = 30;  // ggml type ids

// What the converter did to a tensor, to be undone.
enum class Undo {
  none,
  centred_norm,  // stored 1 + w
  ssm_a,         // stored −exp(A_log), value heads tiled
  head_rows,     // value heads tiled along the rows (unit: head size rows)
  qkv_rows,      // the V rows of in_proj_qkv tiled
  head_columns,  // value heads tiled along the columns (out_proj)
  conv,          // V channels tiled; [K, C] squeezed from [C, 1, K]
};

struct NameRule {
  const char* gguf;  // after "blk.N."
  const char* hf;    // after "model.layers.N."
  Undo undo;
};

constexpr NameRule kLayerRules[] = {
    {"attn_norm.weight", "input_layernorm.weight", Undo::centred_norm},
    {"post_attention_norm.weight", "post_attention_layernorm.weight", Undo::centred_norm},
    {"ffn_gate.weight", "mlp.gate_proj.weight", Undo::none},
    {"ffn_up.weight", "mlp.up_proj.weight", Undo::none},
    {"ffn_down.weight", "mlp.down_proj.weight", Undo::none},
    {"attn_q.weight", "self_attn.q_proj.weight", Undo::none},
    {"attn_k.weight", "self_attn.k_proj.weight", Undo::none},
    {"attn_v.weight", "self_attn.v_proj.weight", Undo::none},
    {"attn_output.weight", "self_attn.o_proj.weight", Undo::none},
    {"attn_q_norm.weight", "self_attn.q_norm.weight", Undo::centred_norm},
    {"attn_k_norm.weight", "self_attn.k_norm.weight", Undo::centred_norm},
    {"attn_qkv.weight", "linear_attn.in_proj_qkv.weight", Undo::qkv_rows},
    {"attn_gate.weight", "linear_attn.in_proj_z.weight", Undo::head_rows},
    {"ssm_beta.weight", "linear_attn.in_proj_b.weight", Undo::head_rows},
    {"ssm_alpha.weight", "linear_attn.in_proj_a.weight", Undo::head_rows},
    {"ssm_conv1d.weight", "linear_attn.conv1d.weight", Undo::conv},
    {"ssm_dt.bias", "linear_attn.dt_bias", Undo::head_rows},
    {"ssm_a", "linear_attn.A_log", Undo::ssm_a},
    {"ssm_norm.weight", "linear_attn.norm.weight", Undo::none},
    {"ssm_out.weight", "linear_attn.out_proj.weight", Undo::head_columns},
};

struct Mapped {
  std::string hf;
  Undo undo = Undo::none;
  bool mtp = false;
};

// The HF name of a GGUF tensor, or nullopt for a name qwen35 has no use for.
std::optional<Mapped> map_name(std::string_view name, int64_t layers) {
  if (name == "token_embd.weight") return Mapped{str_cat(kGgufTextPrefix, "embed_tokens.weight")};
  if (name == "output_norm.weight") return Mapped{str_cat(kGgufTextPrefix, "norm.weight"), Undo::centred_norm};
  if (name == "output.weight") return Mapped{"lm_head.weight"};
  if (!name.starts_with("blk.")) return std::nullopt;
  const size_t dot = name.find('.', 4);
  if (dot == std::string_view::npos || dot == 4) return std::nullopt;
  int64_t layer = 0;
  for (char c : name.substr(4, dot - 4)) {
    if (c < '0' || c > '9' || layer > 1 << 20) return std::nullopt;
    layer = layer * 10 + (c - '0');
  }
  if (layer >= layers) return Mapped{str_cat("mtp.", name), Undo::none, true};  // llama.cpp's nextn layers
  const std::string_view rest = name.substr(dot + 1);
  for (const NameRule& rule : kLayerRules)
    if (rest == rule.gguf) return Mapped{str_cat(kGgufTextPrefix, "layers.", layer, ".", rule.hf), rule.undo};
  return std::nullopt;
}

std::optional<DType> stored_dtype(uint32_t type) {
  switch (type) {
    case kF32: return DType::F32;
    case kF16: return DType::F16;
    case kBF16: return DType::BF16;
    default: return std::nullopt;
  }
}

// HF head h of a tiled GGUF layout: GGUF head j·nK + g holds HF head g·r + j (r = nV / nK).
int64_t tiled_head(int64_t h, int64_t key_heads, int64_t per_key) { return (h % per_key) * key_heads + h / per_key; }

// dst[h] = src[tiled_head(h)] over `heads` consecutive runs of `unit` bytes.
void untile_heads(const std::byte* src, std::byte* dst, int64_t heads, int64_t key_heads, int64_t unit) {
  const int64_t per_key = heads / key_heads;
  for (int64_t h = 0; h < heads; ++h)
    std::memcpy(dst + h * unit, src + tiled_head(h, key_heads, per_key) * unit, static_cast<size_t>(unit));
}

// All values of a tensor as fp32 (F32, F16, BF16, Q8_0).
std::vector<float> values_of(const GgufSetTensor& t) {
  const auto n = static_cast<size_t>(t.info->numel);
  std::vector<float> out(n);  // [numel]
  const std::byte* data = t.data();
  for (size_t i = 0; i < n; ++i) {
    uint16_t bits = 0;
    switch (t.info->type.id) {
      case kF32: std::memcpy(&out[i], data + 4 * i, 4); break;
      case kF16: std::memcpy(&bits, data + 2 * i, 2); out[i] = fp16_to_float(bits); break;
      case kBF16: std::memcpy(&bits, data + 2 * i, 2); out[i] = bf16_to_float(bits); break;
      case kQ8_0:
        if (i % kQ8_0Block == 0) q8_0_dequantize_block(data + i / kQ8_0Block * kQ8_0BlockBytes, out.data() + i);
        break;
    }
  }
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
  converted_bytes_ += bytes;
  return owned_.back().get();
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
  return checkpoint;
}

Status GgufCheckpoint::add(const GgufSetTensor& tensor) {
  const GgufTensor& info = *tensor.info;
  const TextConfig& c = config_.text;
  GgufTypeCount& count = type_counts_[info.type.name];
  count.tensors += 1;
  count.values += static_cast<uint64_t>(info.numel);
  count.bytes += info.bytes;

  const std::optional<Mapped> mapped = map_name(info.name, c.num_hidden_layers);
  if (!mapped)
    return Status::errorf("unexpected tensor \"", info.name, "\" (no part of a ", c.num_hidden_layers,
                          "-layer qwen35 model is stored under this name)");
  TensorView view;
  view.name = mapped->hf;
  view.shape.assign(info.shape.rbegin(), info.shape.rend());  // ggml order is innermost first
  view.data = tensor.data();
  view.nbytes = info.bytes;
  if (mapped->mtp) {  // skipped by binding, whatever its type
    view.dtype = DType::U8;
    tensors_[view.name] = view;
    return {};
  }
  const std::optional<DType> dtype = stored_dtype(info.type.id);
  const bool q8_0 = info.type.id == kQ8_0;
  if (!dtype && !q8_0)
    return Status::errorf("tensor \"", info.name, "\" (", view.name, "): ggml type ", info.type.name,
                          " is not supported yet (supported: F32, F16, BF16, Q8_0)");
  view.dtype = dtype.value_or(DType::U8);
  if (q8_0) view.format = WeightFormatId::q8_0;

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
  // Q8_0 tensors the model reads element by element (see the header).
  const bool embeddings = view.name == str_cat(kGgufTextPrefix, "embed_tokens.weight");
  const bool matmul = matrix && !embeddings && mapped->undo != Undo::conv;
  if (q8_0 && embeddings) {
    const std::vector<float> values = values_of(tensor);
    auto* out = reinterpret_cast<uint16_t*>(own(values.size() * 2));
    for (size_t i = 0; i < values.size(); ++i) out[i] = float_to_bf16(values[i]);
    view.data = reinterpret_cast<const std::byte*>(out);
    view.nbytes = values.size() * 2;
    view.dtype = DType::BF16;
    view.format = WeightFormatId::stored;
  } else if (q8_0 && !matmul) {
    set_f32(values_of(tensor));
  }

  switch (mapped->undo) {
    case Undo::none: break;
    case Undo::centred_norm: {
      std::vector<float> values = values_of(tensor);
      for (float& v : values) v -= 1.0f;
      set_f32(values);
      break;
    }
    case Undo::ssm_a: {
      std::vector<float> stored = values_of(tensor);
      if (static_cast<int64_t>(stored.size()) != nV)
        return Status::errorf("tensor \"", info.name, "\": expected ", nV, " values (one per value head), found ", stored.size());
      std::vector<float> a_log(stored.size());  // [nV] grouped order
      for (int64_t h = 0; h < nV; ++h) {
        const float a = stored[static_cast<size_t>(tiled ? tiled_head(h, nK, nV / nK) : h)];
        if (!(a < 0.0f) || !std::isfinite(a))
          return Status::errorf("tensor \"", info.name, "\"[", h, "] = ", a, ": expected −exp(A_log) < 0");
        a_log[static_cast<size_t>(h)] = a_log_of(a);
      }
      set_f32(a_log);
      break;
    }
    case Undo::head_rows: case Undo::qkv_rows: case Undo::conv: {
      if (!tiled) break;
      // Rows per value head, and the first V row (in_proj_qkv and conv1d: after the q and k channels).
      const int64_t v_begin = mapped->undo == Undo::head_rows ? 0 : 2 * c.key_dim();
      const int64_t head_rows = mapped->undo == Undo::head_rows ? rows / nV : c.linear_value_head_dim;
      if (head_rows < 1 || rows != v_begin + nV * head_rows)
        return Status::errorf("tensor \"", info.name, "\": expected ", v_begin, " + ", nV, " value heads × ",
                              std::max<int64_t>(head_rows, 1), " rows, found ", rows, " rows");
      const uint64_t row_bytes = view.nbytes / static_cast<uint64_t>(rows);
      std::byte* out = own(view.nbytes);
      std::memcpy(out, view.data, view.nbytes);
      untile_heads(view.data + v_begin * row_bytes, out + v_begin * row_bytes, nV, nK,
                   head_rows * static_cast<int64_t>(row_bytes));
      view.data = out;
      break;
    }
    case Undo::head_columns: {
      if (!tiled) break;
      const int64_t dV = c.linear_value_head_dim;
      if (!matrix || view.shape[1] != nV * dV)
        return Status::errorf("tensor \"", info.name, "\": expected ", nV * dV, " columns (value heads × head size), found shape ",
                              shape_to_string(view.shape));
      // A Q8_0 block must not straddle two heads; else the values are permuted as exact F32.
      if (view.format == WeightFormatId::q8_0 && dV % kQ8_0Block != 0) set_f32(values_of(tensor));
      const uint64_t row_bytes = view.nbytes / static_cast<uint64_t>(rows);
      const std::byte* src = view.data;
      std::byte* out = own(view.nbytes);
      for (int64_t r = 0; r < rows; ++r)
        untile_heads(src + r * row_bytes, out + r * row_bytes, nV, nK, static_cast<int64_t>(row_bytes) / nV);
      view.data = out;
      break;
    }
  }
  if (mapped->undo == Undo::conv) view.shape = {view.shape[0], 1, view.shape[1]};
  view.owned = view.data != tensor.data();  // converted into memory this checkpoint holds
  tensors_[view.name] = view;
  return {};
}

}  // namespace ds
