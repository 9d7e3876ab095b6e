// Tuning that depends on the microarchitecture, not the instruction set: chosen at run time from
// the CPU's vendor, with the measurements behind each choice in docs/benchmarks.md.
#pragma once

#include <cstdint>

namespace ds {

struct CpuTuning {
  // How far ahead of a decode matmul's weight stream (one sequential stream per thread) the
  // kernels prefetch, in bytes; 0: none. On the Xeons measured, the hardware prefetchers alone left
  // 2B int8 decode at 81% of the bandwidth floor and 2 groups (2,304 bytes) ahead lifted it to
  // 87–88%, and the AVX-512 bf16 decode (`--isa avx512`) 78–80% → 88–90% (AMX bf16 decode, whose
  // distance is its own: 80–82% without, 84–89% with 2–4 KiB); on Zen 4, prefetching the bf16
  // panels was no faster on 2 threads and 4% slower on 1.
  int64_t decode_prefetch_bytes = 0;
};

const CpuTuning& cpu_tuning();  // for this CPU, detected once

}  // namespace ds
