// Images on the command line: serve's --allowed-local-media-path and --limit-mm-per-prompt (vLLM's
// names), and the tower loaded beside the text model when the checkpoint has one.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "model/model_loader.h"
#include "server/image_inputs.h"
#include "util/status.h"
#include "vision/vision_model.h"

namespace ds::app {

struct VisionCliOptions {
  std::string allowed_local_media_path;
  std::string limit_mm_per_prompt;
};

void add_vision_options(CLI::App* command, VisionCliOptions& options);
// The media options, the directory made canonical (it must exist).
Result<server::MediaOptions> media_options(const VisionCliOptions& options);

// The checkpoint's tower, or null with `refusal` saying why images are refused (a text-only config,
// a GGUF's text-only tensors, a missing preprocessor_config.json); logged either way. Its matmul
// weights are packed for the text model's backend and mode (`threads` pack them).
std::unique_ptr<VisionModel> load_vision_if_present(LoadedModel& loaded, const std::string& model_dir, int threads,
                                                    std::string& refusal);

}  // namespace ds::app
