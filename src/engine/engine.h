// Engine: continuous batching. One engine thread owns the model, the hybrid cache and the
// scheduler; any thread submits token prompts and reads the tokens back through a RequestStream.
// Each step mixes prefill chunks and decodes of many requests in one forward call.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cache/hybrid_cache.h"
#include "cache/prefix_store.h"
#include "engine/request.h"
#include "engine/request_stream.h"
#include "engine/sampling_params.h"
#include "engine/scheduler.h"
#include "engine/step_model.h"
#include "util/random.h"

namespace ds {

struct EngineOptions {
  uint64_t cache_memory = uint64_t{4} << 30;  // bytes for KV blocks + DeltaNet state slots
  uint64_t prefix_cache_memory = uint64_t{2} << 30;  // bytes for DeltaNet snapshots; 0: no prefix cache
  SnapshotPolicy snapshots;                    // where prompts are snapshotted (message start tokens)
  // The prefix cache on disk (empty: memory only): evicted and, at shutdown, all cached blocks and
  // snapshots are written there within prefix_cache_disk bytes, and reloaded at start.
  std::string prefix_cache_dir;
  uint64_t prefix_cache_disk = uint64_t{8} << 30;
  // Names the model's weights, config and compute mode in those files (files of another model are
  // skipped); required with prefix_cache_dir. The app hashes the checkpoint (model_identity.h).
  uint64_t model_identity = 0;
  SchedulerLimits limits;                      // --max-batch-tokens, --max-seqs
  int64_t max_model_len = 0;                   // 0: the model's max_position_embeddings, lowered to what the cache holds
  int64_t max_queue = 256;                     // requests waiting for capacity before submit answers "overloaded"
  std::vector<int32_t> eos_token_ids;          // stop ids of every request (unless ignore_eos)
  uint64_t seed = 0;                           // seeds the requests that bring no seed
  // Test-only: sees (request id, prompt, tokens generated so far) and may rewrite the logits row
  // before sampling — lets end-to-end tests script a model's output (tool calls, reasoning)
  // through the real sampling and output path. Runs on the engine thread.
  std::function<void(uint64_t, std::span<const int32_t>, std::span<const int32_t>, std::span<float>)> logits_hook;
};

// What start-up resolved from the options and the memory budget (logged by the caller).
struct EngineLimits {
  CacheCapacity capacity;
  uint64_t cache_bytes = 0;     // KV blocks + state slots
  uint64_t snapshot_bytes = 0;  // the prefix cache's snapshots
  int64_t max_model_len = 0;
  std::string max_model_len_source;  // why max_model_len has its value
};

// A snapshot of the engine's gauges and counters (read from atomics: never waits for a step).
struct EngineCounters {
  int64_t waiting = 0, running = 0;
  int64_t blocks_used = 0, num_blocks = 0, slots_used = 0, num_slots = 0;
  int64_t prompt_tokens = 0, generation_tokens = 0;  // totals since start
  int64_t preemptions = 0, finished = 0, steps = 0;
  // Prefix cache: prompt tokens of first admissions, and how many of them were found cached.
  int64_t prefix_queries = 0, prefix_hits = 0;
  int64_t cached_blocks = 0, block_evictions = 0;
  int64_t snapshots = 0, snapshot_capacity = 0, snapshot_evictions = 0;
  uint64_t snapshot_bytes = 0;  // bytes of the snapshots held
};

class Engine {
 public:
  // Sizes the cache from the budget, resolves max_model_len and starts the engine thread.
  static Result<std::unique_ptr<Engine>> start(StepModel& model, const EngineOptions& options);
  ~Engine();  // stops the thread; unfinished requests end with FinishReason::error
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Queues a request. Errors (clear, naming the value): bad token ids, invalid sampling, prompt +
  // max_tokens over max_model_len, and "overloaded" when max_queue requests already wait.
  Result<std::shared_ptr<RequestStream>> submit(std::vector<int32_t> prompt, const SamplingParams& params);

  const EngineLimits& limits() const { return limits_; }
  int64_t block_size() const { return cache_.geometry().block_size; }
  KvDtype kv_dtype() const { return cache_.geometry().kv_dtype; }
  EngineCounters counters() const;

 private:
  Engine(StepModel& model, const EngineOptions& options, const EngineLimits& limits, std::unique_ptr<PrefixStore> store);
  void loop();
  void step();
  void reap_cancelled();
  void admitted(Request& request);
  void computed(Request& request, const ScheduledChunk& chunk);
  void preempted(Request& request);
  void finish(Request& request, FinishReason reason, std::optional<int32_t> stop_token = std::nullopt,
              std::string error = {});
  bool is_stop_token(const Request& request, int32_t token) const;
  void publish_counters();

  StepModel& model_;
  const EngineOptions options_;
  const EngineLimits limits_;
  std::unique_ptr<PrefixStore> store_;  // null: no --prefix-cache-dir; outlives cache_, which spills into it
  HybridCache cache_;
  Scheduler scheduler_;
  std::vector<std::unique_ptr<Request>> requests_;  // engine thread only: every admitted-or-waiting request
  std::vector<float> logits_;                       // [max_seqs, vocab]

  std::mutex inbox_mutex_;
  std::condition_variable wake_;
  std::vector<std::unique_ptr<Request>> inbox_;  // guarded by inbox_mutex_
  bool stopping_ = false;                        // guarded by inbox_mutex_
  Xoshiro256 seeds_;                             // guarded by inbox_mutex_
  uint64_t next_id_ = 0;                         // guarded by inbox_mutex_

  struct Gauges {
    std::atomic<int64_t> waiting{0}, running{0}, blocks_used{0}, slots_used{0};
    std::atomic<int64_t> prompt_tokens{0}, generation_tokens{0}, preemptions{0}, finished{0}, steps{0};
    std::atomic<int64_t> prefix_queries{0}, prefix_hits{0}, cached_blocks{0}, block_evictions{0};
    std::atomic<int64_t> snapshots{0}, snapshot_evictions{0};
    std::atomic<uint64_t> snapshot_bytes{0};
  } gauges_;
  std::thread thread_;
};

}  // namespace ds
