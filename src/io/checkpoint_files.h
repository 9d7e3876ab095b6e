// CheckpointFiles: which of the files a Hub checkpoint directory may carry are present
// (config, generation config, weights index, tokenizer, tokenizer config, chat template).
#pragma once

#include <string>

#include "util/status.h"

namespace ds {

struct CheckpointFiles {
  std::string dir;
  bool generation_config = false;   // generation_config.json
  bool sharded = false;             // model.safetensors.index.json (else model.safetensors)
  bool tokenizer_json = false;      // tokenizer.json
  bool tokenizer_config = false;    // tokenizer_config.json
  // Where the chat template comes from: "chat_template.jinja", "tokenizer_config.json" or "".
  std::string chat_template_source;
};

// Looks at DIR (which must exist and be a directory); never reads weights.
Result<CheckpointFiles> find_checkpoint_files(const std::string& dir);

}  // namespace ds
