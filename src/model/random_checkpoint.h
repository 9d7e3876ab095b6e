// Random checkpoints of the real shapes: an HF-layout directory (config.json, generation_config.json,
// model.safetensors or shards + index, tokenizer files, chat template, and deltaserve_random.json
// saying what made it) with random weights drawn per the weight table, edited so that the model
// writes visible text (model/visible_text.h). Deterministic in the seed, whatever the thread count.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "io/dtype.h"
#include "model/gguf_file_type.h"
#include "util/status.h"

namespace ds {

struct TokenizerAssets {
  std::string tokenizer_json;
  std::string tokenizer_config_json;
  std::string chat_template;  // written as chat_template.jinja
};

struct RandomCheckpointOptions {
  std::string out_dir;
  uint64_t seed = 0;
  bool with_mtp = false;
  // BF16 keeps A_log / gated-norm weight in F32 like Qwen3.5; F8_E4M3 writes Qwen's block-FP8 release
  // layout: the Linears Qwen converts (WeightSpec::block_fp8_in_release) as F8_E4M3 + BF16 weight_scale_inv,
  // quantised from the values the BF16 checkpoint of the same seed holds; everything else BF16.
  DType dtype = DType::BF16;
  uint64_t max_shard_bytes = 5'000'000'000ull;  // HF save_pretrained's default "5GB"
  int threads = 1;
  bool force = false;                           // replace an existing directory
  bool visible_text = true;                     // the edits of model/visible_text.h (when the tokenizer has a vocabulary)
};

// Writes the checkpoint `config_json` describes (any valid Qwen3.5 config: nested configs get the
// released layout with a vision tower, flat qwen3_5_text configs the text-only layout). Writes
// into OUT_DIR.partial and renames at the end, so an interrupted run never leaves a directory
// that looks like a complete checkpoint.
Status write_random_checkpoint(const nlohmann::ordered_json& config_json, const RandomCheckpointOptions& options,
                               const TokenizerAssets& assets);

// The same model as one llama.cpp GGUF file at `path` (the text model; tokenizer and chat template in
// its metadata): exactly the values write_random_checkpoint writes with these options (seed, dtype,
// the layout's tensor names; out_dir and max_shard_bytes aside), converted as llama.cpp's converter
// converts them and stored per `file_type` (gguf_file_type.h). Streams: memory stays at a few tens
// of MiB per thread whatever the model's size. MTP layers are refused (not written yet); the
// tokenizer must be byte-level BPE with the Qwen3.5 pre-tokenizer.
Status write_random_gguf(const nlohmann::ordered_json& config_json, const RandomCheckpointOptions& options,
                         const std::string& path, GgufFileType file_type, const TokenizerAssets& assets);

}  // namespace ds
