// make_backend: CpuBackend with the requested (or detected) ISA and thread count.
#include "run_options.h"

#include "kernels/cpu/cpu_backend.h"
#include "util/log.h"

namespace ds::app {

void add_run_options(CLI::App* command, RunOptions& options) {
  command->add_option("--threads", options.threads, "Compute threads (default: physical cores)")
      ->check(CLI::Range(0, 1024));
  command->add_option("--isa", options.isa,
                      "Kernels: auto (the best this CPU has), amx (AMX tiles for bf16 matmuls and bf16-cache "
                      "attention, AMX-INT8 tiles for int8 and Q8_0 batches of 2 tokens or more and GGUF K-quant prefill, "
                      "AVX-512 for the rest), avx512, avx2 or scalar (the reference)")
      ->check(CLI::IsMember({"auto", "amx", "avx512", "avx2", "scalar"}))
      ->capture_default_str();
  command->add_option("--weights", options.weights,
                      "bf16: the checkpoint's own weights (bf16; block FP8 stays FP8), repacked at load into the AVX-512 / AMX / "
                      "AVX2 kernels' panel layout; mapped: the same, read in place from the mapped files (quicker start, slower); "
                      "int8: quantised at load (a scale per 32 inputs; block FP8 requantised); "
                      "q4_k: quantised at load to Q4_K (4.5 bits per weight, the head Q6_K, DeltaNet in_proj_a/b as "
                      "stored). A GGUF file's quantised weights keep their type in every mode but mapped")
      ->check(CLI::IsMember({"bf16", "mapped", "int8", "q4_k"}))
      ->capture_default_str();
  command->add_option("--mode", options.mode, "f32 (reference) or fast (bf16 matmul inputs)")
      ->check(CLI::IsMember({"f32", "fast"}))
      ->capture_default_str();
}

WeightsChoice weights_choice(const RunOptions& options) {
  if (options.weights == "int8") return WeightsChoice::int8;
  if (options.weights == "q4_k") return WeightsChoice::q4_k;
  return options.weights == "mapped" ? WeightsChoice::mapped : WeightsChoice::native;
}

ComputeMode compute_mode(const RunOptions& options) { return options.mode == "f32" ? ComputeMode::f32 : ComputeMode::fast; }

int thread_count(const RunOptions& options) { return options.threads > 0 ? options.threads : physical_cores(); }

std::unique_ptr<Backend> make_backend(const RunOptions& options) {
  Isa isa = Isa::scalar;
  parse_isa(options.isa, &isa);
  const Isa available = detect_isa();
  if (isa > available) {
    log::warn("--isa ", options.isa, " is not supported by this CPU", isa == Isa::amx ? " (" + amx_unavailable_reason() + ")" : "",
              "; using ", isa_name(available));
    isa = available;
  }
  const int threads = thread_count(options);
  auto backend = std::make_unique<CpuBackend>(isa, threads);
  log::info("backend: ", backend->name(), " (CPU supports ", isa_name(available), ")");
  if (available == Isa::avx512) log::info("AMX not used: ", amx_unavailable_reason());
  return backend;
}

}  // namespace ds::app
