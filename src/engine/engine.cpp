// Engine: submit validates and queues; the engine thread loops schedule → apply the cache plan →
// one forward over every scheduled chunk → sample the rows that finished their tokens → stream.
#include "engine/engine.h"

#include <algorithm>

#include "cache/hybrid_cache_store.h"
#include "util/check.h"
#include "util/human.h"
#include "util/log.h"

namespace ds {

Result<std::unique_ptr<Engine>> Engine::start(StepModel& model, const EngineOptions& options) {
  DS_TRY(validate_limits(options.limits));
  if (options.max_queue < 1) return Status::errorf("--max-queue must be at least 1, found ", options.max_queue);
  EngineLimits limits;
  DS_ASSIGN_OR_RETURN(limits.capacity, size_cache(model.cache_geometry(), options.cache_memory, options.limits.max_seqs,
                                                   options.prefix_cache_memory));
  const CacheGeometry geometry = model.cache_geometry();
  limits.cache_bytes = static_cast<uint64_t>(limits.capacity.num_blocks) * geometry.block_bytes() +
                       static_cast<uint64_t>(limits.capacity.num_slots) * geometry.slot_bytes();
  limits.snapshot_bytes = static_cast<uint64_t>(limits.capacity.num_snapshots) * (geometry.slot_bytes() + geometry.block_bytes());
  const int64_t cache_positions = limits.capacity.num_blocks * geometry.block_size;
  const int64_t config_len = model.max_position_embeddings() > 0 ? model.max_position_embeddings() : cache_positions;
  if (options.max_model_len > 0) {
    if (options.max_model_len > cache_positions)
      return Status::errorf("--max-model-len ", options.max_model_len, " needs more KV than --cache-memory holds (",
                            cache_positions, " positions); raise --cache-memory or lower --max-model-len");
    limits.max_model_len = options.max_model_len;
    limits.max_model_len_source = "--max-model-len";
  } else if (config_len <= cache_positions) {
    limits.max_model_len = config_len;
    limits.max_model_len_source = "the config's max_position_embeddings";
  } else {
    limits.max_model_len = cache_positions;
    limits.max_model_len_source = str_cat("lowered from max_position_embeddings ", config_len,
                                          " to what the cache memory holds for one sequence");
  }
  std::unique_ptr<PrefixStore> store;
  if (!options.prefix_cache_dir.empty() && limits.capacity.num_snapshots > 0) {
    if (options.model_identity == 0)
      return Status::internal("--prefix-cache-dir needs the model's identity (EngineOptions::model_identity), found none");
    StoreIdentity identity;
    identity.model = options.model_identity;
    identity.geometry = geometry.identity();
    DS_ASSIGN_OR_RETURN(store, PrefixStore::open(options.prefix_cache_dir, options.prefix_cache_disk, identity, geometry,
                                                 model.vocab_size()));
  }
  model.reserve(options.limits.max_batch_tokens);
  return std::unique_ptr<Engine>(new Engine(model, options, limits, std::move(store)));
}

Engine::Engine(StepModel& model, const EngineOptions& options, const EngineLimits& limits,
               std::unique_ptr<PrefixStore> store)
    : model_(model),
      options_(options),
      limits_(limits),
      store_(std::move(store)),
      cache_(model.cache_geometry(), limits.capacity, model.backend(), options.snapshots),
      scheduler_(options.limits),
      logits_(static_cast<size_t>(options.limits.max_seqs * model.vocab_size())),
      seeds_(options.seed) {
  if (store_) {
    const PrefixStore::Reloaded reloaded = reload_prefix_cache(cache_, *store_);
    log::info("prefix cache: reloaded ", reloaded.snapshots, " snapshots and ", reloaded.blocks, " KV blocks (",
              human_bytes(reloaded.bytes), ") from ", store_->dir().string(), "; skipped ", reloaded.skipped.size(),
              " files");
    spill_evictions(cache_, *store_);
    publish_counters();
  }
  thread_ = std::thread([this] { loop(); });
}

Engine::~Engine() {
  {
    std::lock_guard lock(inbox_mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  // Every request has ended and given its blocks back: what is cached now is complete.
  if (store_) flush_prefix_cache(cache_, *store_);
}

Result<std::shared_ptr<RequestStream>> Engine::submit(std::vector<int32_t> prompt, const SamplingParams& params) {
  DS_TRY(validate_sampling(params));
  if (prompt.empty()) return Status::error("prompt: expected at least one token, found none");
  const int64_t vocab = model_.vocab_size();
  for (size_t i = 0; i < prompt.size(); ++i)
    if (prompt[i] < 0 || prompt[i] >= vocab)
      return Status::errorf("prompt token ", i, " is ", prompt[i], ", outside the vocabulary [0, ", vocab, ")");
  const auto total = static_cast<int64_t>(prompt.size()) + params.max_tokens;
  if (total > limits_.max_model_len)
    return Status::errorf("prompt of ", prompt.size(), " tokens + max_tokens ", params.max_tokens, " = ", total,
                          " exceeds the context limit of ", limits_.max_model_len, " tokens (max_model_len)");
  std::shared_ptr<RequestStream> stream;
  {
    std::lock_guard lock(inbox_mutex_);
    if (stopping_) return Status::unavailable("engine is shutting down");
    const auto queued = static_cast<int64_t>(inbox_.size()) + gauges_.waiting.load();
    if (queued >= options_.max_queue)
      return Status::overloaded("overloaded: ", queued, " requests already wait for capacity (--max-queue ", options_.max_queue, ")");
    const uint64_t id = next_id_++;
    const int64_t prompt_tokens = static_cast<int64_t>(prompt.size());
    stream = std::make_shared<RequestStream>(id, prompt_tokens);
    inbox_.push_back(std::make_unique<Request>(id, std::move(prompt), params, seeds_.next(), stream));
  }
  wake_.notify_all();
  return stream;
}

EngineCounters Engine::counters() const {
  EngineCounters c;
  c.waiting = gauges_.waiting.load();
  c.running = gauges_.running.load();
  c.blocks_used = gauges_.blocks_used.load();
  c.num_blocks = limits_.capacity.num_blocks;
  c.slots_used = gauges_.slots_used.load();
  c.num_slots = limits_.capacity.num_slots;
  c.prompt_tokens = gauges_.prompt_tokens.load();
  c.generation_tokens = gauges_.generation_tokens.load();
  c.preemptions = gauges_.preemptions.load();
  c.finished = gauges_.finished.load();
  c.steps = gauges_.steps.load();
  c.prefix_queries = gauges_.prefix_queries.load();
  c.prefix_hits = gauges_.prefix_hits.load();
  c.cached_blocks = gauges_.cached_blocks.load();
  c.block_evictions = gauges_.block_evictions.load();
  c.snapshots = gauges_.snapshots.load();
  c.snapshot_capacity = limits_.capacity.num_snapshots;
  c.snapshot_evictions = gauges_.snapshot_evictions.load();
  c.snapshot_bytes = gauges_.snapshot_bytes.load();
  return c;
}

void Engine::loop() {
  while (true) {
    std::vector<std::unique_ptr<Request>> arrived;
    {
      std::unique_lock lock(inbox_mutex_);
      wake_.wait(lock, [&] { return stopping_ || !inbox_.empty() || !scheduler_.idle(); });
      if (stopping_) {
        for (auto& r : inbox_) r->stream->finish(FinishReason::error, std::nullopt, "engine stopped");
        inbox_.clear();
        break;
      }
      arrived.swap(inbox_);
      // Counted as waiting before the lock drops, so submit's queue bound sees them.
      gauges_.waiting.fetch_add(static_cast<int64_t>(arrived.size()));
    }
    for (auto& r : arrived) {
      // Computed once per request, on this thread: the prompt's keys and snapshot boundaries.
      r->prefix_keys = cache_.prefix_keys(r->prompt());
      r->snapshot_positions = cache_.snapshot_positions(r->prompt());
      scheduler_.add(r.get());
      requests_.push_back(std::move(r));
    }
    reap_cancelled();
    step();
    publish_counters();
  }
  while (!requests_.empty()) finish(*requests_.back(), FinishReason::error, std::nullopt, "engine stopped");
}

void Engine::reap_cancelled() {
  for (size_t i = 0; i < requests_.size();) {
    if (requests_[i]->stream->cancel_requested()) {
      finish(*requests_[i], FinishReason::cancelled);  // erases requests_[i]
    } else {
      ++i;
    }
  }
}

bool Engine::is_stop_token(const Request& r, int32_t token) const {
  const auto& extra = r.params.stop_token_ids;
  if (std::find(extra.begin(), extra.end(), token) != extra.end()) return true;
  return !r.params.ignore_eos &&
         std::find(options_.eos_token_ids.begin(), options_.eos_token_ids.end(), token) != options_.eos_token_ids.end();
}

void Engine::step() {
  if (scheduler_.idle()) return;
  StepPlan plan = scheduler_.schedule(cache_);
  for (Request* r : plan.preempted) preempted(*r);  // before the plan releases their caches
  cache_.apply(plan.cache);
  for (Request* r : plan.admitted) admitted(*r);
  gauges_.preemptions.fetch_add(static_cast<int64_t>(plan.preempted.size()));
  if (plan.chunks.empty()) {
    // Only reachable when the head of the queue can never fit, which submit's max_model_len check
    // rules out; fail it rather than spin.
    if (scheduler_.running().empty() && !scheduler_.waiting().empty())
      finish(*scheduler_.waiting().front(), FinishReason::error, std::nullopt, "request cannot fit in the cache");
    return;
  }

  ForwardBatch batch;  // spans into each request's tokens: valid until they grow after the forward
  for (const ScheduledChunk& chunk : plan.chunks) {
    Request& r = *chunk.request;
    const bool wants_logits = r.num_computed + chunk.num_tokens == r.total();
    batch.sequences.push_back(SequenceInput{std::span<const int32_t>(r.tokens).subspan(r.num_computed, chunk.num_tokens),
                                            r.num_computed, r.cache.blocks, r.cache.slot, {},
                                            wants_logits ? LogitsRows::last : LogitsRows::none, chunk.kind});
  }
  const Status status = model_.forward(batch, cache_, logits_.data());
  gauges_.steps.fetch_add(1);
  if (!status.ok()) {
    log::error("engine: forward failed: ", status.message());
    for (const ScheduledChunk& chunk : plan.chunks) finish(*chunk.request, FinishReason::error, std::nullopt, status.message());
    return;
  }
  const int64_t vocab = model_.vocab_size();
  int64_t row = 0;
  for (const ScheduledChunk& chunk : plan.chunks) {
    Request& r = *chunk.request;
    computed(r, chunk);
    if (r.num_computed < r.total()) continue;  // a prefill chunk short of the end: no logits
    const std::span<float> logits(logits_.data() + row++ * vocab, static_cast<size_t>(vocab));
    if (options_.logits_hook) {
      const std::span<const int32_t> all(r.tokens);
      options_.logits_hook(r.id, all.first(static_cast<size_t>(r.prompt_len)), all.subspan(static_cast<size_t>(r.prompt_len)), logits);
    }
    SampledToken sampled = r.sampler.sample(logits);
    const int32_t token = sampled.token;
    r.tokens.push_back(token);
    gauges_.generation_tokens.fetch_add(1);
    r.stream->push(std::move(sampled));
    if (is_stop_token(r, token)) finish(r, FinishReason::stop, token);
    else if (r.generated() >= r.params.max_tokens || r.total() >= limits_.max_model_len) finish(r, FinishReason::length);
  }
}

void Engine::admitted(Request& r) {
  if (r.cached_tokens >= 0) return;  // counted at its first admission; this one follows a preemption
  r.cached_tokens = r.num_computed;
  r.stream->set_cached_tokens(r.cached_tokens);
  gauges_.prompt_tokens.fetch_add(r.prompt_len);
  if (cache_.prefix_caching()) {
    gauges_.prefix_queries.fetch_add(r.prompt_len);
    gauges_.prefix_hits.fetch_add(r.cached_tokens);
  }
}

void Engine::computed(Request& r, const ScheduledChunk& chunk) {
  const int64_t before = r.num_computed;
  r.num_computed += chunk.num_tokens;
  // Prompt tokens computed by the chunked kernel become cache: their full blocks get keys, and
  // the state is snapshotted at the prompt's boundaries.
  if (chunk.kind == StepKind::prefill && before < r.prompt_len)
    cache_.cache_prefix(r.cache, r.prompt(), r.prefix_keys, r.num_computed, r.at_snapshot());
}

void Engine::preempted(Request& r) {
  log::debug("engine: request ", r.id, " preempted (KV blocks ran out) after ", r.computed_at_preemption,
             " tokens; it restarts from the cache");
  if (!cache_.prefix_caching()) return;
  // What it computed stays cache: a prefill stopped on the grid is a snapshot like any prompt's; a
  // decoding request's state is a rule-4 snapshot, and it looks itself up again with what it generated.
  const int64_t computed = r.computed_at_preemption;
  if (computed < r.prompt_len) {
    cache_.cache_prefix(r.cache, r.prompt(), r.prefix_keys, computed, computed > 0 && computed % kSnapshotGrid == 0);
  } else {
    r.prefix_keys = cache_.prefix_keys(r.tokens);  // cover the generated tokens once, for both uses
    cache_.cache_generation(r.cache, r.tokens, r.prefix_keys, computed);
  }
}

void Engine::finish(Request& request, FinishReason reason, std::optional<int32_t> stop_token, std::string error) {
  request.stream->finish(reason, stop_token, std::move(error));
  // Rule 4: a client may send prompt + completion back; it continues from where this one stopped.
  if (reason == FinishReason::stop || reason == FinishReason::length)
    cache_.cache_generation(request.cache, request.tokens, request.prefix_keys, request.num_computed);
  cache_.release(request.cache);
  scheduler_.remove(&request);
  gauges_.finished.fetch_add(1);
  auto it = std::find_if(requests_.begin(), requests_.end(), [&](const auto& r) { return r.get() == &request; });
  DS_CHECK(it != requests_.end(), "finishing an unknown request ", request.id);
  requests_.erase(it);
}

void Engine::publish_counters() {
  gauges_.waiting.store(static_cast<int64_t>(scheduler_.waiting().size()));
  gauges_.running.store(static_cast<int64_t>(scheduler_.running().size()));
  gauges_.blocks_used.store(cache_.num_blocks() - cache_.free_blocks());
  gauges_.slots_used.store(cache_.num_slots() - cache_.free_slots());
  gauges_.cached_blocks.store(cache_.cached_blocks());
  gauges_.block_evictions.store(cache_.block_evictions());
  gauges_.snapshots.store(cache_.snapshots().size());
  gauges_.snapshot_evictions.store(cache_.snapshots().evictions());
  gauges_.snapshot_bytes.store(cache_.snapshots().bytes_used());
}

}  // namespace ds
