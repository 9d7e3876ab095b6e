// write_gguf: a Qwen3.5 text model as a llama.cpp GGUF file (architecture qwen35), the inverse of
// GgufCheckpoint: HF tensors renamed and converted as convert_hf_to_gguf.py converts them (the
// shared table, gguf_tensor_map.h), each stored in the ggml type the file type gives it
// (gguf_file_type.h), with the model config as qwen35.* metadata.
//
// The values come from a source, element ranges of HF tensors as fp32, asked for in pieces of a few
// million values from `threads` threads at once; each piece is converted, encoded and written at its
// place in the file (GgufWriter), so neither the model nor the file is ever held in memory. The bytes
// depend on the values only: the same source gives the same file whatever the thread count.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "io/gguf_writer.h"
#include "io/model_config.h"
#include "model/gguf_file_type.h"
#include "model/weight_spec.h"
#include "util/function_ref.h"
#include "util/status.h"

namespace ds {

// out[0, end − begin) = elements [begin, end) of `spec`'s tensor in HF (row-major) order, as fp32.
// Called concurrently from several threads.
using HfValueSource = FunctionRef<void(const WeightSpec& spec, uint64_t begin, uint64_t end, float* out)>;

struct GgufExportOptions {
  std::string path;                          // FILE.gguf (written as FILE.gguf.partial, then renamed)
  GgufFileType file_type = GgufFileType::bf16;
  std::string name;                          // general.name
  GgufMetadata metadata;                     // further pairs (tokenizer.*, …), after the model's
  int threads = 1;
};

// Writes the tensors of `table` that a qwen35 GGUF stores (the text model under `hf_text_prefix`, and
// the MTP head mtp.* as nextn blocks when the table has it; vision tensors are left out), with
// config's metadata (block_count and nextn_predict_layers counting the head's layers). An error names a text tensor the
// map does not know, a shape that does not fit the config, or a failed write.
Status write_gguf(const ModelConfig& config, const std::vector<WeightSpec>& table, std::string_view hf_text_prefix,
                  HfValueSource source, const GgufExportOptions& options);

}  // namespace ds
