// parallel_ranges: splits [0, count) into `threads` contiguous ranges run on their own threads.
// A plain fork-join helper for start-up work (checkpoint creation); the inference hot path gets
// a persistent pool with the kernels (Backend::parallel_for, one task an index).
#pragma once

#include <cstddef>

#include "util/function_ref.h"

namespace ds {

// Calls fn(begin, end) for each range; the calling thread runs the first one.
void parallel_ranges(size_t count, int threads, FunctionRef<void(size_t, size_t)> fn);

// Threads the machine offers (hardware_concurrency, at least 1).
int available_threads();

}  // namespace ds
