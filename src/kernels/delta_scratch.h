// DeltaScratch: the buffers one thread needs to run the gated delta rule on one head at a time
// (chunk-sized), kept by the caller so the hot path does not allocate.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/backend.h"

namespace ds {

inline constexpr int64_t kDeltaChunk = 64;  // HF / FLA chunk size

struct DeltaScratch {
  // Recurrent (one token at a time): token t's and token t + 1's.
  std::vector<float> q, k, delta;                 // [k_dim], [k_dim], [v_dim]
  std::vector<float> q_next, k_next, delta_next;  // [k_dim], [k_dim], [v_dim]
  // Chunked, C = kDeltaChunk (layouts in gated_delta_rule_tiled.inc).
  std::vector<float> X;     // [2C, k_dim]: k_i and q_i interleaved
  std::vector<float> KT;    // [k_dim, C]
  std::vector<float> gram;  // [2C, C]
  std::vector<float> E;     // [C, C]
  std::vector<float> P;     // [2C, v_dim]
  std::vector<float> vnew;  // [C, v_dim]
  std::vector<float> D, B;  // [C]
  std::vector<double> G;    // [C]: cumulative log-decay of the chunk
  void size_for(const DeltaNetShape& s) {
    constexpr int64_t C = kDeltaChunk;
    q.resize(s.k_dim), k.resize(s.k_dim), delta.resize(s.v_dim);
    q_next.resize(s.k_dim), k_next.resize(s.k_dim), delta_next.resize(s.v_dim);
    X.resize(2 * C * s.k_dim), KT.resize(s.k_dim * C), gram.resize(2 * C * C), E.resize(C * C);
    P.resize(2 * C * s.v_dim), vnew.resize(C * s.v_dim);
    D.resize(C), B.resize(C), G.resize(C);
  }
};

}  // namespace ds
