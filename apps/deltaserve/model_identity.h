// The model identity the prefix cache's files carry (--prefix-cache-dir): a 64-bit hash of
// everything that decides the numbers a cached block or snapshot holds, so files written for
// another checkpoint, weight format, compute mode or kernel set are skipped, never trusted.
#pragma once

#include <cstdint>
#include <string>

#include "engine/engine.h"
#include "kernels/backend.h"
#include "model/model_loader.h"

namespace ds::app {

// Hashes config.json's bytes, every tensor's name, dtype, shape and size and 192 bytes of its data
// (the start, middle and end: two random checkpoints of one shape differ there, and reading them
// touches three pages per tensor, not the weights), the weight format, the compute mode and the
// backend (its ISA).
Result<uint64_t> model_identity(const std::string& model_dir, const LoadedModel& loaded, const Backend& backend);
// Sets options.model_identity when the prefix cache is kept on disk (nothing to hash otherwise).
Status identify_model(EngineOptions& options, const std::string& model_dir, const LoadedModel& loaded,
                      const Backend& backend);

}  // namespace ds::app
