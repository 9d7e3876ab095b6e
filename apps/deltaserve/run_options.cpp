// make_backend: CpuBackend with the requested (or detected) ISA and thread count.
#include "backend_options.h"

#include "kernels/cpu/cpu_backend.h"
#include "util/log.h"

namespace ds::app {

void add_backend_options(CLI::App* command, BackendOptions& options) {
  command->add_option("--threads", options.threads, "Compute threads (default: physical cores)")
      ->check(CLI::Range(0, 1024));
  command->add_option("--isa", options.isa, "Kernels: auto, avx512, avx2 or scalar (the reference)")
      ->check(CLI::IsMember({"auto", "avx512", "avx2", "scalar"}))
      ->capture_default_str();
}

std::unique_ptr<Backend> make_backend(const BackendOptions& options) {
  Isa isa = Isa::scalar;
  parse_isa(options.isa, &isa);
  const Isa available = detect_isa();
  if (static_cast<int>(isa) > static_cast<int>(available)) {
    log::warn("--isa ", options.isa, " is not supported by this CPU; using ", isa_name(available));
    isa = available;
  }
  const int threads = options.threads > 0 ? options.threads : physical_cores();
  auto backend = std::make_unique<CpuBackend>(isa, threads);
  log::info("backend: ", backend->name(), " (CPU supports ", isa_name(available), ")");
  return backend;
}

}  // namespace ds::app
