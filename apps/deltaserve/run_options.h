// Command-line options shared by every command that runs the model: --threads, --isa, --weights, --mode.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "kernels/backend.h"
#include "model/model_loader.h"
#include "model/qwen35_model.h"

namespace ds::app {

struct RunOptions {
  int threads = 0;              // 0: physical cores
  std::string isa = "auto";     // auto | amx | avx512 | avx2 | scalar
  std::string weights = "bf16";  // bf16 (as stored, repacked) | mapped (as stored, in place) | int8
  std::string mode = "fast";     // fast (bf16 matmul inputs) | f32 (the reference)
};

void add_run_options(CLI::App* command, RunOptions& options);
// The CPU backend for these options; logs the ISA and thread count.
std::unique_ptr<Backend> make_backend(const RunOptions& options);
WeightsChoice weights_choice(const RunOptions& options);
ComputeMode compute_mode(const RunOptions& options);
int thread_count(const RunOptions& options);

}  // namespace ds::app
