// Flush-to-zero for the fp32 work of one scope: the calling thread's MXCSR gets FTZ (results below
// 2^-126 become ±0) and DAZ (such inputs read as ±0) until the scope ends, then its old value back.
// Why: x86 cores take a microcode assist on denormal operands and results, so a loop that wanders
// into them runs several times slower (the chunked delta rule: 3.9×, docs/benchmarks.md). The
// Gated DeltaNet does that whenever a head's decays exp(G_i − G_j) fall into [2^-149, 2^-126) —
// cumulative log-decays of −87 to −103 inside a chunk, common with strong gates — and every product
// with those values is denormal too.
// Anything that small is below the rounding of the O(1) values it is added to.
#pragma once

#include <xmmintrin.h>

namespace ds {

class FlushDenormals {
 public:
  FlushDenormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | kFlushToZero | kDenormalsAreZero); }
  ~FlushDenormals() { _mm_setcsr(saved_); }
  FlushDenormals(const FlushDenormals&) = delete;
  FlushDenormals& operator=(const FlushDenormals&) = delete;

 private:
  static constexpr unsigned kFlushToZero = 1u << 15, kDenormalsAreZero = 1u << 6;
  unsigned saved_;
};

}  // namespace ds
