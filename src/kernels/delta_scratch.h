// DeltaScratch: the buffers one thread needs to run the gated delta rule on one head at a time
// (chunk-sized), kept by the caller so the hot path does not allocate.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/backend.h"

namespace ds {

inline constexpr int64_t kDeltaChunk = 64;  // HF / FLA chunk size

struct DeltaScratch {
  std::vector<float> q, k, delta;                      // [k_dim], [k_dim], [v_dim]
  std::vector<float> Q, K, KT, B, A, row, vnew, next;  // chunk buffers
  std::vector<double> G;                               // cumulative log-decay of the chunk
  void size_for(const DeltaNetShape& s) {
    q.resize(s.k_dim), k.resize(s.k_dim), delta.resize(s.v_dim);
    Q.resize(kDeltaChunk * s.k_dim), K.resize(kDeltaChunk * s.k_dim), KT.resize(s.k_dim * kDeltaChunk);
    B.resize(kDeltaChunk), G.resize(kDeltaChunk), A.resize(kDeltaChunk * kDeltaChunk), row.resize(kDeltaChunk);
    vnew.resize(kDeltaChunk * s.v_dim), next.resize(s.k_dim * s.v_dim);
  }
};

}  // namespace ds
