// Engine: continuous batching. One engine thread owns the model, the hybrid cache and the
// scheduler; any thread submits token prompts and reads the tokens back through a RequestStream.
// Each step mixes prefill chunks and decodes of many requests in one forward call.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cache/hybrid_cache.h"
#include "cache/hybrid_cache_store.h"
#include "cache/prefix_store.h"
#include "cache/resumable_prefixes.h"
#include "engine/draft_cost_meter.h"
#include "engine/drafter.h"
#include "engine/request.h"
#include "engine/request_stream.h"
#include "engine/sampling_params.h"
#include "engine/scheduler.h"
#include "engine/step_model.h"
#include "util/random.h"

namespace ds {

// The most drafts one verify may carry (the recorded DeltaNet inputs and logits rows grow with it).
inline constexpr int64_t kMaxSpeculativeTokens = 16;

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
  // Told every change of which prompt prefixes the cache can resume (the KV event publisher),
  // the reload from prefix_cache_dir included; runs on the engine thread. Null: nobody.
  ResumablePrefixObserver* prefix_observer = nullptr;
  SchedulerLimits limits;                      // --max-batch-tokens, --max-seqs
  int64_t max_model_len = 0;                   // 0: the model's max_position_embeddings, lowered to what the cache holds
  int64_t max_queue = 256;                     // requests waiting for capacity before submit answers "overloaded"
  std::vector<int32_t> eos_token_ids;          // stop ids of every request (unless ignore_eos)
  uint64_t seed = 0;                           // seeds the requests that bring no seed
  // Test-only: sees (request id, prompt, tokens generated so far) and may rewrite the logits row
  // before sampling — lets end-to-end tests script a model's output (tool calls, reasoning)
  // through the real sampling and output path. Runs on the engine thread.
  std::function<void(uint64_t, std::span<const int32_t>, std::span<const int32_t>, std::span<float>)> logits_hook;
  // Speculative decoding (docs/mtp.md): up to this many drafts per decoding request and step, proposed
  // by `drafter` and verified in the step's forward; the output is what plain decoding gives. 0: off.
  int64_t speculative_tokens = 0;
  Drafter* drafter = nullptr;  // required when speculative_tokens > 0; outlives the engine
  // Adaptive k: each request verifies the 0 .. speculative_tokens drafts that its acceptance so far
  // makes pay under the draft costs (adaptive_drafts.h); off: speculative_tokens every round. The
  // costs start at draft_costs and follow what the engine's steps measure (draft_cost_meter.h)
  // unless measure_draft_costs is off.
  bool adaptive_drafts = true;
  DraftCosts draft_costs;
  bool measure_draft_costs = true;
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
  // Speculative decoding: the k configured (0: off); verify rounds with drafts, drafts verified, drafts
  // accepted (vLLM's spec_decode_num_drafts / num_draft_tokens / num_accepted_tokens); and per draft
  // position j, the rounds whose draft j was accepted (num_accepted_tokens_per_pos).
  int64_t speculative_tokens = 0;
  int64_t spec_drafts = 0, spec_draft_tokens = 0, spec_accepted_tokens = 0;
  std::array<int64_t, kMaxSpeculativeTokens> spec_accepted_per_position{};
  // Adaptive k's costs as measured so far (draft_cost_meter.h), in decode steps, and the steps the
  // engine made plain for the meter's yardstick.
  DraftCosts draft_costs;
  int64_t cost_meter_plain_steps = 0;
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
  // `images` (prompt order): the prompt holds each as a run of its token count of image-pad tokens
  // (expand_image_pads); refused by a model without a vision tower.
  Result<std::shared_ptr<RequestStream>> submit(std::vector<int32_t> prompt, const SamplingParams& params,
                                                std::vector<PromptImage> images = {});

  const EngineLimits& limits() const { return limits_; }
  int64_t block_size() const { return cache_.geometry().block_size; }
  KvDtype kv_dtype() const { return cache_.geometry().kv_dtype; }
  EngineCounters counters() const;

 private:
  Engine(StepModel& model, const EngineOptions& options, const EngineLimits& limits, std::unique_ptr<PrefixStore> store);
  void loop();
  void step();
  void reap_cancelled();
  // Speculative decoding: how many drafts each decoding request should verify (before scheduling), then
  // the drafter's drafts for the room the plan made (after it is applied). False: drafting failed and
  // the step's requests have ended with the error.
  void plan_drafts();
  bool draft(StepPlan& plan);
  // Adaptive k's costs from this step's timings (draft_cost_meter.h).
  void measure_drafting(const StepPlan& plan, double propose_s);
  void measure_forward(const StepPlan& plan, double seconds);
  void publish_draft_costs();
  // Runs the tower for the images tokens [start, start + n) of `request` reach that have no rows yet,
  // reusing the rows of a running request with the same image.
  Status encode_images(Request& request, int64_t start, int64_t n);
  // The tokens the step's logits rows give, into draws_ (one list per chunk): a chunk that ends its
  // tokens samples its row; a verify samples row by row while the drafts hold, as plain decoding's
  // sequence of samples would. The requests' samplers are independent, so the chunks are drawn on
  // the backend's threads (in turn with a logits hook, which is not thread-safe).
  void draw_tokens(const StepPlan& plan);
  void draw_chunk(const ScheduledChunk& chunk, int64_t first_row, std::vector<SampledToken>& out);
  // Appends a drawn token to `request` and streams it.
  int32_t emit(Request& request, SampledToken sampled);
  // A verify step's draws: keep what was confirmed, roll the DeltaNet state back to it, finish at a
  // stop. False when the request has finished.
  bool commit_verified(Request& request, const ScheduledChunk& chunk, std::vector<SampledToken>& draws);
  void admitted(Request& request);
  void computed(Request& request, const ScheduledChunk& chunk);
  void preempted(Request& request);
  void finish(Request& request, FinishReason reason, std::optional<int32_t> stop_token = std::nullopt,
              std::string error = {});
  bool is_stop_token(const Request& request, int32_t token) const;
  struct Ending {
    FinishReason reason;
    std::optional<int32_t> stop_token;  // when a stop token (not a stop string) ended it
  };
  // Why `request` ends now that it has emitted `token` (a stop token, its stop condition, max_tokens,
  // the context), if it does. Asked once per emitted token, in order: the stop condition keeps state.
  std::optional<Ending> ends_after(const Request& request, int32_t token) const;
  void publish_counters();

  StepModel& model_;
  const EngineOptions options_;
  const EngineLimits limits_;
  std::unique_ptr<PrefixStore> store_;  // null: no --prefix-cache-dir; outlives cache_, which spills into it
  HybridCache cache_;
  PendingWrites* pending_writes_ = nullptr;  // owned by cache_; written while idle (null: no store)
  Scheduler scheduler_;
  std::vector<std::unique_ptr<Request>> requests_;  // engine thread only: every admitted-or-waiting request
  std::vector<float> logits_;                       // [max_seqs · (1 + speculative_tokens), vocab]
  std::vector<std::vector<SampledToken>> draws_;    // [chunk of the step][token]: draw_tokens' (reused)
  // Merger rows by image content hash while some request holds them: an image is encoded once however
  // many running requests (or times in one prompt) carry it.
  std::unordered_map<uint64_t, std::weak_ptr<const std::vector<float>>> image_rows_;

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
    std::atomic<int64_t> spec_drafts{0}, spec_draft_tokens{0}, spec_accepted_tokens{0};
    std::array<std::atomic<int64_t>, kMaxSpeculativeTokens> spec_accepted_per_position{};
    std::atomic<double> draft_verify_row{0}, draft_step{0};
    std::atomic<int64_t> cost_meter_plain_steps{0};
  } gauges_;
  DraftCostMeter draft_cost_meter_;  // engine thread only
  double head_pass_s_ = 0;           // the head's pass after the last forward: drafting of the next round
  std::thread thread_;
};

}  // namespace ds
