// The Qwen3.5 tensor table: every tensor a checkpoint holds (HF name, shape, accepted dtypes,
// the part of the model it belongs to, how `make-checkpoint` initialises it). One table serves
// binding, `inspect` and the random-checkpoint writer, so names and shapes live in one place.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/dtype.h"
#include "io/model_config.h"
#include "io/tensor_view.h"

namespace ds {

enum class WeightPart { embeddings, deltanet, attention, mlp, norms, head, vision, mtp };
inline constexpr WeightPart kAllWeightParts[] = {WeightPart::embeddings, WeightPart::deltanet, WeightPart::attention,
                                                 WeightPart::mlp,        WeightPart::norms,    WeightPart::head,
                                                 WeightPart::vision,     WeightPart::mtp};
const char* weight_part_name(WeightPart part);

// How a random checkpoint fills a tensor (HF initialises several of these to constants; we
// randomise them so every convention — (1+w) norms, plain gated-norm weight, decays — is exercised).
enum class WeightInit {
  normal,          // N(0, 0.02): projections, embeddings (HF initializer_range)
  centred_norm,    // N(0, 0.1): zero-centred RMSNorm weights, applied as (1 + w)
  plain_norm,      // 1 + N(0, 0.1): plain scales (gated norm, LayerNorm weights)
  bias,            // N(0, 0.02)
  conv,            // U(-0.5, 0.5): depthwise conv, PyTorch's kaiming bound 1/sqrt(kernel)
  a_log,           // log U(1, 16): DeltaNet decay rate
  dt_bias,         // U(-1, 1)
};

struct WeightSpec {
  std::string name;            // full name in the checkpoint
  std::vector<int64_t> shape;
  WeightPart part;
  DType stored_dtype;          // what a released Qwen3.5 file stores (random checkpoints write this)
  WeightInit init;
  TensorView* target = nullptr;  // where binding puts the view (nullptr: not bound yet / skipped part)
  // Qwen's FP8 releases store it in block FP8 (F8_E4M3 + weight_scale_inv; quantized-checkpoints.md §1.3):
  // mlp gate/up/down, self_attn q/k/v/o and linear_attn in_proj_qkv / in_proj_z / out_proj, MTP's too.
  bool block_fp8_in_release = false;
};

// Name prefixes: released (multimodal) files nest the text model under "model.language_model.";
// text-only saves (Qwen3_5ForCausalLM) use "model.".
inline constexpr const char* kNestedTextPrefix = "model.language_model.";
inline constexpr const char* kFlatTextPrefix = "model.";
inline constexpr const char* kVisionPrefix = "model.visual.";
inline constexpr const char* kMtpPrefix = "mtp.";  // the MTP head, in every layout (a GGUF's nextn blocks read back so)

struct Qwen35Weights;

struct WeightTableOptions {
  std::string text_prefix = kNestedTextPrefix;
  bool lm_head = true;   // include lm_head.weight (false for tied checkpoints that omit it)
  bool vision = false;   // include model.visual.* (needs config.vision)
  bool mtp = false;      // include mtp.* (config.text.mtp_num_hidden_layers layers)
};

// Builds the table. With `weights` non-null, text-model specs (and with options.mtp the MTP head's,
// whose weights.mtp it creates) point at the fields to bind.
std::vector<WeightSpec> qwen35_weight_table(const ModelConfig& config, const WeightTableOptions& options,
                                            Qwen35Weights* weights = nullptr);

// Text weights may be stored in these dtypes (the fast path converts at load time where needed).
bool is_accepted_text_dtype(DType dtype);

}  // namespace ds
