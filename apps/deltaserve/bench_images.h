// `bench --images S,...`: time to first token of one S × S image (a quality-90 JPEG) + a short
// question, split into decoding, preprocessing, the vision tower and the text prefill (one model call over the prompt), and the
// tower's matmul and attention throughput, the matmuls as a share of the bf16 peak.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/model_loader.h"
#include "util/status.h"

namespace ds::app {

// The sides of --images (a comma-separated list, each at least 32 pixels).
Result<std::vector<int32_t>> parse_image_sides(const std::string& sizes);

// `model_dir` must hold a checkpoint with a tower and its preprocessor_config.json. Prints one line
// (or one JSON object) per size.
Status bench_images(const std::vector<int32_t>& sides, LoadedModel& loaded, const std::string& model_dir, int threads,
                    double peak_flops, const char* peak_name, bool json);

}  // namespace ds::app
