// `bench --concurrency N,...`: N requests at once through the engine — aggregate decode tok/s and
// each request's TTFT and inter-token latency.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "util/status.h"

namespace ds::app {

struct ConcurrencyResult {
  int64_t concurrency = 0;
  double decode_tokens_per_s = 0;  // tokens generated while all N decode ÷ that window
  double total_tokens_per_s = 0;   // all generated tokens ÷ wall time from the first submit
  double ttft_mean_s = 0, ttft_max_s = 0;
  double itl_mean_s = 0, itl_p50_s = 0, itl_p99_s = 0;  // gaps between a request's consecutive tokens
};

// Submits `concurrency` requests of `prompt_tokens` random tokens (drawn from `seed`), each generating
// `decode_tokens` (EOS ignored) under `sampling`'s temperature, top-k and top-p, and waits for all.
Result<ConcurrencyResult> run_concurrency(Engine& engine, int64_t vocab, int64_t concurrency, int64_t prompt_tokens,
                                          int64_t decode_tokens, const SamplingParams& sampling, uint64_t seed);

}  // namespace ds::app
