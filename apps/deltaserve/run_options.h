// Command-line options shared by every command that runs the model: --threads and --isa.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "kernels/backend.h"

namespace ds::app {

struct BackendOptions {
  int threads = 0;           // 0: physical cores
  std::string isa = "auto";  // auto | avx512 | avx2 | scalar
};

void add_backend_options(CLI::App* command, BackendOptions& options);
// The CPU backend for these options; logs the ISA and thread count.
std::unique_ptr<Backend> make_backend(const BackendOptions& options);

}  // namespace ds::app
