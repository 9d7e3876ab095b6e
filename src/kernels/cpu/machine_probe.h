// Machine probes for benchmarks: streaming read bandwidth with one contiguous stream per thread
// (what a decode step's weight reads look like) and the compute peaks (AVX-512 and AMX bf16, AVX2 fp32).
#pragma once

#include <cstdint>

#include "kernels/cpu/isa.h"
#include "util/thread_pool.h"

// On the probes' loops: they time the machine's units, and the sanitizer build instruments the
// kernels too, so its checks would time the sanitizer instead (and take most of a bench run there).
#define DS_PROBE_LOOP __attribute__((no_sanitize("address", "undefined")))

namespace ds {

// Bytes/s reading `bytes` (split in contiguous ranges, one per thread), best of `repeats`, each read
// plainly and (where this CPU's decode kernels prefetch) with their prefetch.
double measure_read_bandwidth(ThreadPool& pool, uint64_t bytes, int repeats);
// FLOP/s of register-resident vdpbf16ps (AVX-512 BF16) on all threads; 0 below AVX-512.
double measure_compute_peak(ThreadPool& pool, Isa isa);
// FLOP/s of register-resident 256-bit `vfmadd231ps` on all threads: the AVX2 kernels' peak (they widen
// bf16 weights to fp32); 0 below AVX2.
double measure_fma_peak(ThreadPool& pool, Isa isa);
// Int8 ops/s (a multiply and an add per product) of register-resident vpdpbusd on all threads: the
// int8 weights' kernel; 0 without AVX-512 VNNI.
double measure_int8_peak(ThreadPool& pool, Isa isa);
// FLOP/s of tile-resident tdpbf16ps on all threads; 0 below Isa::amx.
double measure_amx_peak(ThreadPool& pool, Isa isa);

}  // namespace ds
