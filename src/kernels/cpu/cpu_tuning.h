// Tuning that depends on the microarchitecture, not the instruction set: chosen at run time from
// the CPU's vendor, with the measurements behind each choice in docs/benchmarks.md.
#pragma once

#include <cstdint>

namespace ds {

// How far ahead a decode kernel prefetches the weight stream it reads once, and how many times it
// requests each line (kernels/cpu/stream_prefetch.h).
struct StreamPrefetch {
  int64_t bytes = 0;  // 0: none
  int requests = 1;   // 1 to 3
};

// The same for the K-quant panels, and where to.
struct KquantPrefetch : StreamPrefetch {
  bool into_l2 = false;    // prefetcht1 (else prefetcht0, into L1)
  bool per_group = false;  // a superblock's lines an eighth before each of its groups (else all before its first)
};

struct CpuTuning {
  // How far ahead of a decode matmul's weight stream (one sequential stream per thread) the int8,
  // bf16 and FP8 panel kernels prefetch. On the Xeons measured, the hardware prefetchers alone left
  // 2B int8 decode at 81% of the bandwidth floor and 2 groups (2,304 bytes) ahead lifted it to
  // 87–88%, and the AVX-512 bf16 decode (`--isa avx512`) 78–80% → 88–90% (AMX bf16 decode, whose
  // distance is its own: 80–82% without, 84–89% with 2–4 KiB); on Zen 4, prefetching the bf16
  // panels was no faster on 2 threads and 4% slower on 1. Requesting each line three times there
  // (2B, shares of the plain-read floor of the time, two runs each): Q8_0 85–91% → 93–99%, `--weights
  // int8` 85% → 97–106%, FP8 90–94% → 95–99%, bf16 98–100% → 102–103%. Shares over 100% showed that
  // plain read to be short of what the machine reads; the probe now also reads with this prefetch and
  // keeps the faster (machine_probe.cpp): 36–38 against 30–32 GB/s, every share here a fifth lower.
  StreamPrefetch decode_prefetch;
  // The same for the K-quant panels (kernels/formats/kquant/, the AVX-512 and AVX2 kernels), whose
  // decode reads each panel as one stream (a superblock's codes and side bytes, then the next's).
  // Zen 5 (family 26): 6 KiB ahead into L1 — a Q4_K decode stream read 72–74 GB/s on two threads with
  // 6–9 KiB, 67 with 3 KiB, 61 without, 59 with 12 KiB into L2 (a plain read: 80; one thread 41 of
  // 46); Q6_K 69 with 6 KiB, 67 with 3 or 9, 61 with 12 (a plain read: 75). Measured before the
  // panels kept each superblock's side bytes beside its codes (all side bytes at a panel's end, two
  // streams): Zen 4 (family 25 with AVX-512) 48 KiB ahead into L2 — two
  // threads read 17–25 GB/s without, 15 3 KiB ahead into L1, 18–33 48 KiB ahead into L2 (Q6_K 11–16,
  // 10–13, 20–42; the VM's bandwidth swings, hence ranges); Zen 3 (family 25 without AVX-512; the
  // AVX2 kernel), 2B Q4_K_M decode as a share of the floor, three rounds: none 46–55%, 3 KiB into L1
  // 65–70%, 16 KiB into L2 64–65%, 48 KiB into L2 55–67%. The AMX Xeon (Intel), 2B Q4_K_M decode on
  // the current layout, all of a superblock's prefetches issued together: 2,304 bytes into L1 74–77%
  // of the floor (three runs), 1,152 74%, 1,728 75%, 3,456 70%, 6 KiB 65%, none 59%, 4.5 KiB into L2
  // 69%. Issued an eighth of a superblock before each group and 9–27 KiB ahead into L2, the same
  // decode read 89–93% in one hour (18 KiB: 89.6–92.3%, four runs; 9–27 KiB issued together 83–86%)
  // and 72–80% in a later, slower one against 68–73% for the 2,304 bytes into L1 — so Intel takes 18 KiB
  // into L2, per group. Requesting each line three times (2 KiB of stream apart) then took the
  // same decode from 75–79% to 87–92% of that plain-read floor (two threads' stream 24–26 → 29–30
  // GB/s; twice: 86–90%, four times: 86–89%; against the probe that prefetches, 77%: a read with
  // the kernels' prefetch and no arithmetic streams 34–35 GB/s). The AMD choices were measured
  // issued together, one request a line, and keep that. Every other CPU takes Zen 5's until
  // measured (docs/benchmarks.md).
  KquantPrefetch kquant_decode_prefetch = {{6144}, false};
};

const CpuTuning& cpu_tuning();  // for this CPU, detected once

}  // namespace ds
