// StepModel: what the engine needs from a model — its cache shapes and one forward over a batch
// of sequences whose caches live in a HybridCache. Qwen35StepModel adapts the real model; tests
// plug in fakes to exercise the scheduler and engine loop in microseconds.
#pragma once

#include <cstdint>

#include "cache/hybrid_cache.h"
#include "model/forward_batch.h"
#include "util/status.h"

namespace ds {

class StepModel {
 public:
  virtual ~StepModel() = default;
  virtual int64_t vocab_size() const = 0;
  virtual CacheGeometry cache_geometry() const = 0;
  virtual int64_t max_position_embeddings() const = 0;
  // The backend that owns the cache memory: the cache's copies (snapshots) run on it.
  virtual Backend& backend() = 0;
  // Sizes per-call buffers for batches of up to `max_batch_tokens` tokens (called once, at start).
  virtual void reserve(int64_t max_batch_tokens) = 0;
  // Runs the batch; logits [batch.logits_rows(), vocab] in batch order.
  virtual Status forward(const ForwardBatch& batch, HybridCache& cache, float* logits) = 0;
};

}  // namespace ds
