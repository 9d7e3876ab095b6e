// GgufCheckpoint: a llama.cpp GGUF model (architecture qwen35; one file or a split set) as a
// Checkpoint under the HF names, with llama.cpp's conversions undone (docs/gguf.md has the table),
// so binding, the weight table and every later step treat it like the safetensors original.
//
// What convert_hf_to_gguf.py (conversion/qwen.py) did, and what the model gets back:
//   renames            every tensor (blk.N.attn_qkv.weight → model.layers.N.linear_attn.in_proj_qkv.weight, …);
//                      shapes reversed from ggml order; ssm_conv1d [K, C] back to [C, 1, K].
//   zero-centred norms stored as 1 + w in F32 (input/post-attention/final, q_norm, k_norm; not
//                      linear_attn.norm): the model gets w = stored − 1 in F32. The model applies 1 + w,
//                      which gives back the stored value bit for bit whenever stored ≥ 0.5 (then
//                      stored − 1 is exact, Sterbenz) — the value HF multiplies by, fl(1 + w) in fp32.
//   A_log              stored as ssm_a = −exp(A_log) in F32; the model computes −exp(A_log) itself, so
//                      it gets an F32 A_log, within 8 ulps of log(−ssm_a), whose std::exp is exactly
//                      −ssm_a — there is one whenever the converter's exp of the F32 original agreed with
//                      std::exp (on every fixture value) — else the nearest log (exp then off by an ulp or so).
//   value heads        when nV > nK, tiled (GGUF head j·nK + g) back to grouped (HF head g·r + j) in the
//                      V rows of in_proj_qkv, in_proj_z, in_proj_a/b, A_log, dt_bias, conv1d's V
//                      channels and out_proj's columns: a permutation of whole rows / head-sized
//                      column runs, exact in any type. Where a block of out_proj spans two value
//                      heads (a head size that is not a multiple of the type's block: 128 in Q4_K's
//                      256), its columns keep the file's order and column_heads() says which HF head
//                      each run holds; the model puts out_proj's input in that order instead.
// Tensor types: F32, F16, BF16 as stored (read in place); Q8_0, Q4_K, Q5_K, Q6_K and IQ4_XS as their
// blocks (kernels/formats/) where the model reads whole rows — matmul weights and the embedding table
// (its rows dequantised as they are gathered) — and expanded to F32 (exactly) anywhere else (a norm
// or the conv in a block type). Every other ggml type is refused, naming the tensor and the type.
// The MTP head: llama.cpp's nextn blocks (blk.N for N ≥ the model's layers, qwen35.nextn_predict_layers
// of them) read back as the HF head mtp.* (gguf_tensor_map.h has the names), converted like the text
// layers (norms 1 + w undone) and in any of the types above, so the head binds and runs as from
// safetensors. A file whose nextn_predict_layers says it has a head must hold all of it: open() names
// the first missing tensor.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "io/checkpoint.h"
#include "io/gguf_set.h"
#include "io/model_config.h"
#include "util/status.h"

namespace ds {

inline constexpr const char* kGgufTextPrefix = "model.";

// Per ggml type of the file: tensors, values and bytes (the start-up log and inspect).
struct GgufTypeCount {
  int64_t tensors = 0;
  uint64_t values = 0;
  uint64_t bytes = 0;
};

class GgufCheckpoint final : public Checkpoint {
 public:
  // `path`: FILE.gguf or any part of a split set.
  static Result<GgufCheckpoint> open(const std::string& path);

  const ModelConfig& config() const { return config_; }
  const GgufSet& gguf() const { return *set_; }
  const std::map<std::string, GgufTypeCount>& type_counts() const { return type_counts_; }
  uint64_t converted_bytes() const { return converted_bytes_; }  // held in memory, not mapped
  uint64_t release_converted(const std::set<const std::byte*>& in_use) override;

 private:
  Status add(const GgufSetTensor& tensor);
  Status check_mtp_head() const;
  std::byte* own(uint64_t bytes);

  std::unique_ptr<GgufSet> set_;
  ModelConfig config_;
  std::vector<std::unique_ptr<std::byte[]>> owned_;  // converted tensors' values (null once released)
  std::vector<uint64_t> owned_bytes_;                 // their sizes
  std::map<std::string, GgufTypeCount> type_counts_;
  uint64_t converted_bytes_ = 0;
};

}  // namespace ds
