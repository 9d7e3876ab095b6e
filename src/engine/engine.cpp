// Engine: submit validates and queues; the engine thread loops schedule → apply the cache plan →
// one forward over every scheduled chunk → sample the rows that finished their tokens → stream.
#include "engine/engine.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "cache/hybrid_cache_store.h"
#include "util/check.h"
#include "util/elapsed.h"
#include "util/human.h"
#include "util/log.h"

namespace ds {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

Result<std::unique_ptr<Engine>> Engine::start(StepModel& model, const EngineOptions& options) {
  DS_TRY(validate_limits(options.limits));
  if (options.max_queue < 1) return Status::errorf("--max-queue must be at least 1, found ", options.max_queue);
  if (options.speculative_tokens < 0 || options.speculative_tokens > kMaxSpeculativeTokens)
    return Status::errorf("--speculative-tokens must be 0 .. ", kMaxSpeculativeTokens, ", found ", options.speculative_tokens);
  if (options.speculative_tokens > 0) {
    if (options.drafter == nullptr) return Status::internal("speculative decoding needs a drafter, found none");
    for (double cost : {options.draft_costs.verify_row, options.draft_costs.draft_step})
      if (!(cost >= 0 && cost < 1e3)) return Status::errorf("draft costs must be finite and non-negative, found ", cost);
    DeltaNetRecord probe;
    DS_TRY(model.reserve_record(probe, 1));
  }
  EngineLimits limits;
  DS_ASSIGN_OR_RETURN(limits.capacity, size_cache(model.cache_geometry(), options.cache_memory, options.limits.max_seqs,
                                                   options.prefix_cache_memory, options.speculative_tokens > 0));
  const CacheGeometry geometry = model.cache_geometry();
  limits.cache_bytes = static_cast<uint64_t>(limits.capacity.num_blocks) * geometry.block_bytes() +
                       static_cast<uint64_t>(limits.capacity.num_slots + limits.capacity.num_spare_slots) *
                           geometry.slot_bytes();
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
      logits_(static_cast<size_t>(options.limits.max_seqs * (1 + options.speculative_tokens) * model.vocab_size())),
      seeds_(options.seed),
      draft_cost_meter_(options.draft_costs) {
  publish_draft_costs();
  if (options.prefix_observer && cache_.prefix_caching()) announce_resumable_prefixes(cache_, *options.prefix_observer);
  if (store_) {
    const PrefixStore::Reloaded reloaded = reload_prefix_cache(cache_, *store_);
    log::info("prefix cache: reloaded ", reloaded.snapshots, " snapshots and ", reloaded.blocks, " KV blocks (",
              human_bytes(reloaded.bytes), ") from ", store_->dir().string(), "; skipped ", reloaded.skipped.size(),
              " files");
    spill_evictions(cache_, *store_);
    pending_writes_ = &remember_writes(cache_, *store_);
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

Result<std::shared_ptr<RequestStream>> Engine::submit(std::vector<int32_t> prompt, const SamplingParams& params,
                                                      std::vector<PromptImage> images) {
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
  // Images: laid out here (positions, runs); the tower runs on the engine thread when a chunk reaches them.
  RequestImages planned;
  const std::optional<ImageTokenSpec> vision = model_.image_tokens();
  if (!vision && !images.empty())
    return Status::errorf("images: this model takes text only (no vision tower is loaded), found ",
                          images.size(), " image(s)");
  if (vision) {
    DS_ASSIGN_OR_RETURN(planned, plan_request_images(prompt, std::move(images), vision->image_token_id, vision->merge_size));
  }
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
    inbox_.back()->images = std::move(planned);
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
  c.spec_drafts = gauges_.spec_drafts.load();
  c.spec_draft_tokens = gauges_.spec_draft_tokens.load();
  c.spec_accepted_tokens = gauges_.spec_accepted_tokens.load();
  c.speculative_tokens = options_.speculative_tokens;
  c.draft_costs = DraftCosts{gauges_.draft_verify_row.load(), gauges_.draft_step.load()};
  c.cost_meter_plain_steps = gauges_.cost_meter_plain_steps.load();
  for (size_t j = 0; j < c.spec_accepted_per_position.size(); ++j)
    c.spec_accepted_per_position[j] = gauges_.spec_accepted_per_position[j].load();
  return c;
}

void Engine::loop() {
  while (true) {
    std::vector<std::unique_ptr<Request>> arrived;
    {
      std::unique_lock lock(inbox_mutex_);
      auto has_work = [&] { return stopping_ || !inbox_.empty() || !scheduler_.idle(); };
      // Idle: write what the cache took since, a record at a time, so a killed process leaves it on
      // disk (a request that arrives meanwhile waits for one record's write at most).
      while (!has_work() && pending_writes_ && !pending_writes_->empty()) {
        lock.unlock();
        pending_writes_->write_one();
        lock.lock();
      }
      wake_.wait(lock, has_work);
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
      r->prefix_keys = cache_.prefix_keys(r->prompt(), r->images.keyed_contents());
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

std::optional<Engine::Ending> Engine::ends_after(const Request& r, int32_t token) const {
  if (is_stop_token(r, token)) return Ending{FinishReason::stop, token};
  if (r.params.stop_condition && r.params.stop_condition->ends_at(token)) return Ending{FinishReason::stop, std::nullopt};
  if (r.generated() >= r.params.max_tokens || r.total() >= limits_.max_model_len) return Ending{FinishReason::length, std::nullopt};
  return std::nullopt;
}

void Engine::plan_drafts() {
  if (options_.speculative_tokens == 0) return;
  // A plain step for the cost meter when it wants one (draft_cost_meter.h) and the step can be one:
  // every running sequence decodes and none waits to be admitted (a prefill row spoils the sample).
  const std::vector<Request*>& running = scheduler_.running();
  const bool calibrate = options_.adaptive_drafts && options_.measure_draft_costs && draft_cost_meter_.wants_plain_step() &&
                         scheduler_.waiting().empty() && std::none_of(running.begin(), running.end(), [](const Request* r) { return r->prefilling(); });
  if (calibrate && !running.empty()) gauges_.cost_meter_plain_steps.fetch_add(1);
  for (Request* r : running) {
    // No drafts past max_tokens (a round emits up to k + 1 tokens) or past the context limit (the
    // verify feeds positions total − 1 .. total − 1 + k).
    const int64_t k = calibrate ? 0 : options_.adaptive_drafts ? r->next_drafts : options_.speculative_tokens;
    r->wanted_drafts = r->prefilling() ? 0
                                       : std::max<int64_t>(0, std::min({k,
                                                                        r->params.max_tokens - r->generated() - 1,
                                                                        limits_.max_model_len - r->total()}));
  }
}

bool Engine::draft(StepPlan& plan) {
  if (options_.speculative_tokens == 0) return true;
  std::vector<DraftRequest> asks;
  for (const ScheduledChunk& chunk : plan.chunks) {
    Request& r = *chunk.request;
    r.drafts.clear();
    if (!chunk.verifies()) continue;
    asks.push_back(DraftRequest{r.id, r.tokens, chunk.num_tokens - 1, r.cache.blocks, &r.drafts,
                                r.images.empty() ? 0 : r.images.rope_delta});
  }
  if (asks.empty()) return true;
  if (const Status status = options_.drafter->propose(asks, cache_); !status.ok()) {
    log::error("engine: drafting failed: ", status.message());
    for (const ScheduledChunk& chunk : plan.chunks) finish(*chunk.request, FinishReason::error, std::nullopt, status.message());
    return false;
  }
  const int64_t vocab = model_.vocab_size();
  for (ScheduledChunk& chunk : plan.chunks) {
    if (!chunk.verifies()) continue;
    std::vector<int32_t>& drafts = chunk.request->drafts;
    if (static_cast<int64_t>(drafts.size()) > chunk.num_tokens - 1) drafts.resize(static_cast<size_t>(chunk.num_tokens - 1));
    // A token outside the vocabulary ends the drafts (a drafter's bug must not reach the model).
    const auto bad = std::find_if(drafts.begin(), drafts.end(), [&](int32_t t) { return t < 0 || t >= vocab; });
    drafts.erase(bad, drafts.end());
    chunk.num_tokens = 1 + static_cast<int64_t>(drafts.size());  // fewer drafts: a shorter verify
  }
  return true;
}

void Engine::measure_drafting(const StepPlan& plan, double propose_s) {
  int64_t deepest = 0;  // the head's chained calls run for every request at once: the deepest counts
  for (const ScheduledChunk& chunk : plan.chunks)
    if (chunk.kind == StepKind::decode) deepest = std::max(deepest, chunk.num_tokens - 1);
  if (deepest > 0 && options_.measure_draft_costs) {
    draft_cost_meter_.drafting(head_pass_s_ + propose_s, deepest);
    publish_draft_costs();
  }
  head_pass_s_ = 0;  // a pass that no round followed (the request stopped drafting) is not a draft's cost
}

void Engine::measure_forward(const StepPlan& plan, double seconds) {
  if (options_.speculative_tokens == 0 || !options_.measure_draft_costs) return;
  int64_t extra_rows = 0;
  for (const ScheduledChunk& chunk : plan.chunks) {
    if (chunk.kind != StepKind::decode) return;  // prefill rows cost what they cost: no sample
    extra_rows += chunk.num_tokens - 1;
  }
  if (extra_rows == 0) draft_cost_meter_.plain_step(seconds);
  else draft_cost_meter_.verify_step(seconds, extra_rows);
  publish_draft_costs();
}

void Engine::publish_draft_costs() {
  const DraftCosts costs = draft_cost_meter_.costs();
  gauges_.draft_verify_row.store(costs.verify_row);
  gauges_.draft_step.store(costs.draft_step);
}

void Engine::step() {
  if (scheduler_.idle()) return;
  plan_drafts();
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
  // The tower, for the images this step's prefill chunks reach; a request whose image fails ends here.
  std::vector<std::pair<Request*, Status>> failed;
  std::erase_if(plan.chunks, [&](const ScheduledChunk& chunk) {
    Request& r = *chunk.request;
    if (r.images.empty() || chunk.kind == StepKind::decode) return false;
    Status encoded = encode_images(r, r.num_computed, chunk.num_tokens);
    if (encoded.ok()) return false;
    failed.emplace_back(&r, std::move(encoded));
    return true;
  });
  for (auto& [r, status] : failed) {
    log::error("engine: request ", r->id, ": the vision tower failed: ", status.message());
    finish(*r, FinishReason::error, std::nullopt, str_cat("the vision tower failed: ", status.message()));
  }
  if (plan.chunks.empty()) return;
  const Clock::time_point drafting = Clock::now();
  if (!draft(plan)) return;
  measure_drafting(plan, seconds_since(drafting));

  // The MTP head reads the main model's hidden rows of every row the step computes.
  const bool head_pass = options_.speculative_tokens > 0 && options_.drafter->reads_hidden();
  const LogitsRows hidden = head_pass ? LogitsRows::all : LogitsRows::none;
  const Clock::time_point forward_start = Clock::now();  // a verify's cost includes saving the state
  ForwardBatch batch;  // spans into each request's tokens: valid until they grow after the forward
  for (const ScheduledChunk& chunk : plan.chunks) {
    Request& r = *chunk.request;
    if (chunk.verifies()) {
      // A verify: the last token and its drafts, every row's logits, the DeltaNet inputs recorded and
      // the state written into the spare slot, the slot's own left as it was for a rollback (docs/mtp.md).
      DS_CHECK(chunk.num_tokens == 1 + static_cast<int64_t>(r.drafts.size()), "request ", r.id, " verifies ",
               chunk.num_tokens, " tokens with ", r.drafts.size(), " drafts");
      DS_CHECK(r.cache.spare >= 0, "request ", r.id, " verifies without a spare state slot");
      if (r.record.max_rows == 0)
        DS_CHECK(model_.reserve_record(r.record, 1 + options_.speculative_tokens).ok(), "checked at start");
      r.verify_tokens.assign(1, r.tokens.back());
      r.verify_tokens.insert(r.verify_tokens.end(), r.drafts.begin(), r.drafts.end());
      batch.sequences.push_back(SequenceInput{r.verify_tokens, r.num_computed, r.cache.blocks, r.cache.slot, {},
                                              LogitsRows::all, StepKind::decode});
      batch.sequences.back().state_out_slot = r.cache.spare;
      batch.sequences.back().record = &r.record;
      batch.sequences.back().hidden = hidden;
      continue;
    }
    const bool wants_logits = chunk.ends_tokens();
    batch.sequences.push_back(SequenceInput{std::span<const int32_t>(r.tokens).subspan(r.num_computed, chunk.num_tokens),
                                            r.num_computed, r.cache.blocks, r.cache.slot, {},
                                            wants_logits ? LogitsRows::last : LogitsRows::none, chunk.kind});
    batch.sequences.back().hidden = hidden;
  }
  for (size_t i = 0; i < plan.chunks.size(); ++i) {  // mRoPE positions and merger rows of requests with images
    Request& r = *plan.chunks[i].request;
    if (!r.images.empty()) r.images.fill(batch.sequences[i], r.num_computed, plan.chunks[i].num_tokens, r.prompt_len);
  }
  const Status status = model_.forward(batch, cache_, logits_.data());
  gauges_.steps.fetch_add(1);
  if (status.ok()) measure_forward(plan, seconds_since(forward_start));
  if (!status.ok()) {
    log::error("engine: forward failed: ", status.message());
    for (const ScheduledChunk& chunk : plan.chunks) finish(*chunk.request, FinishReason::error, std::nullopt, status.message());
    return;
  }
  draw_tokens(plan);
  int64_t hidden_row = 0;
  std::vector<ComputedRows> kept;  // for the drafter: the rows of the requests that go on
  for (size_t i = 0; i < plan.chunks.size(); ++i) {
    const ScheduledChunk& chunk = plan.chunks[i];
    Request& r = *chunk.request;
    const int64_t start = r.num_computed, first_hidden = hidden_row;
    hidden_row += hidden == LogitsRows::all ? chunk.num_tokens : 0;
    bool goes_on = true;
    if (chunk.verifies()) {
      goes_on = commit_verified(r, chunk, draws_[i]);  // may finish r
    } else {
      computed(r, chunk);
      if (!draws_[i].empty()) {  // a prefill chunk short of the end has no logits
        const int32_t token = emit(r, std::move(draws_[i].front()));
        if (const std::optional<Ending> ending = ends_after(r, token)) {
          finish(r, ending->reason, ending->stop_token);
          goes_on = false;
        }
      }
    }
    if (goes_on && options_.speculative_tokens > 0 && !r.prefilling()) {
      if (chunk.kind == StepKind::decode && chunk.num_tokens == 1) r.adaptive.observe_plain_step();
      r.next_drafts = r.adaptive.choose(options_.speculative_tokens, draft_cost_meter_.costs());
    }
    if (goes_on && hidden == LogitsRows::all) {
      const bool predicts = !r.prefilling() && (!options_.adaptive_drafts || r.next_drafts > 0);
      const int64_t n = r.num_computed - start;
      kept.push_back(ComputedRows{r.id, start, std::span<const int32_t>(r.tokens).subspan(static_cast<size_t>(start + 1),
                                                                                          static_cast<size_t>(n)),
                                  r.cache.blocks, first_hidden, predicts});
      if (!r.images.empty()) {  // the head sees the main model's positions and merger rows, as vLLM's
        r.images.fill_head(start, n, r.prompt_len);
        kept.back().positions = r.images.head_positions;
        kept.back().next_embedding_at = r.images.head_at;
        kept.back().next_embedding_rows = r.images.head_rows;
      }
    }
  }
  if (kept.empty()) return;
  const Clock::time_point pass_start = Clock::now();
  const Status passed = options_.drafter->computed(kept, cache_);
  head_pass_s_ = seconds_since(pass_start);
  if (!passed.ok()) {
    log::error("engine: the drafter's pass failed: ", passed.message());
    for (const ComputedRows& c : kept) {  // by id: the chunks also name requests that have finished
      const auto it = std::find_if(requests_.begin(), requests_.end(), [&](const auto& r) { return r->id == c.id; });
      if (it != requests_.end()) finish(**it, FinishReason::error, std::nullopt, passed.message());
    }
  }
}

void Engine::draw_tokens(const StepPlan& plan) {
  std::vector<int64_t> first_row(plan.chunks.size(), -1);  // of each chunk's logits rows; -1: none
  int64_t row = 0;
  for (size_t i = 0; i < plan.chunks.size(); ++i) {  // the forward's order of logits rows
    const ScheduledChunk& chunk = plan.chunks[i];
    if (chunk.verifies()) {
      first_row[i] = row;
      row += chunk.num_tokens;
    } else if (chunk.ends_tokens()) {
      first_row[i] = row++;
    }
  }
  draws_.resize(plan.chunks.size());
  auto draw = [&](int64_t i) {
    const auto c = static_cast<size_t>(i);
    draws_[c].clear();
    if (first_row[c] >= 0) draw_chunk(plan.chunks[c], first_row[c], draws_[c]);
  };
  const auto chunks = static_cast<int64_t>(plan.chunks.size());
  if (options_.logits_hook) {
    for (int64_t i = 0; i < chunks; ++i) draw(i);
  } else {
    model_.backend().parallel_for(chunks, draw);
  }
}

void Engine::draw_chunk(const ScheduledChunk& chunk, int64_t first_row, std::vector<SampledToken>& out) {
  Request& r = *chunk.request;
  const int64_t vocab = model_.vocab_size();
  const int64_t drafted = chunk.verifies() ? chunk.num_tokens - 1 : 0;
  // Row j's input is the last token (j = 0) or draft j; its logits choose the token after it. Sampling
  // row by row and stopping at the first token that differs from the next draft is plain decoding's
  // sequence of samples (same sampler, same order), so the output is the same whatever was drafted.
  // A stop inside the run ends the request: the commit uses the draws up to it.
  for (int64_t j = 0; j <= drafted; ++j) {
    const std::span<float> logits(logits_.data() + (first_row + j) * vocab, static_cast<size_t>(vocab));
    if (options_.logits_hook) {  // it sees the tokens generated so far, those drawn before this row included
      std::vector<int32_t> generated(r.tokens.begin() + r.prompt_len, r.tokens.end());
      for (const SampledToken& s : out) generated.push_back(s.token);
      options_.logits_hook(r.id, std::span<const int32_t>(r.tokens).first(static_cast<size_t>(r.prompt_len)), generated,
                           logits);
    }
    out.push_back(r.sampler.sample(logits));
    if (j == drafted || out.back().token != r.drafts[static_cast<size_t>(j)]) break;
  }
}

int32_t Engine::emit(Request& r, SampledToken sampled) {
  const int32_t token = sampled.token;
  r.tokens.push_back(token);
  gauges_.generation_tokens.fetch_add(1);
  r.stream->push(std::move(sampled));
  return token;
}

bool Engine::commit_verified(Request& r, const ScheduledChunk& chunk, std::vector<SampledToken>& draws) {
  const int64_t drafted = chunk.num_tokens - 1;
  int64_t fed = 0, accepted = 0;  // rows whose input stays (the last token and the confirmed drafts)
  std::optional<Ending> ending;
  for (size_t j = 0; j < draws.size(); ++j) {  // draw_chunk stopped at the first miss
    fed = static_cast<int64_t>(j) + 1;
    const int32_t token = emit(r, std::move(draws[j]));
    const bool confirms = static_cast<int64_t>(j) < drafted && token == r.drafts[j];
    accepted += confirms;
    ending = ends_after(r, token);
    if (ending || !confirms) break;
  }
  r.adaptive.observe_round(drafted, accepted);
  gauges_.spec_drafts.fetch_add(1);
  gauges_.spec_draft_tokens.fetch_add(drafted);
  gauges_.spec_accepted_tokens.fetch_add(accepted);
  for (int64_t j = 0; j < accepted; ++j) gauges_.spec_accepted_per_position[static_cast<size_t>(j)].fetch_add(1);
  r.num_computed += fed;
  r.drafts.clear();
  if (fed == chunk.num_tokens) {  // every row stands: the spare holds the state after them
    cache_.states().swap(r.cache.slot, r.cache.spare);
  } else {  // the slot still holds the state before the verify: the rows that stay, again
    const Status replayed = model_.replay_deltanet(r.record, fed, cache_, r.cache.slot);
    if (!replayed.ok()) {
      log::error("engine: DeltaNet rollback failed: ", replayed.message());
      finish(r, FinishReason::error, std::nullopt, replayed.message());
      return false;
    }
  }
  if (ending) finish(r, ending->reason, ending->stop_token);
  return !ending;
}

Status Engine::encode_images(Request& r, int64_t start, int64_t n) {
  for (const size_t j : r.images.missing(start, n)) {
    PromptImage& image = r.images.images[j];
    const auto held = image_rows_.find(image.content_hash);
    std::shared_ptr<const std::vector<float>> rows = held == image_rows_.end() ? nullptr : held->second.lock();
    if (!rows) {
      if (!image.pixel_values) return Status::internal("image ", j, " reached the tower without its pixel values");
      DS_ASSIGN_OR_RETURN(std::vector<float> merged, model_.encode_image(image));
      const int64_t tokens = r.images.count[j];
      if (merged.empty() || static_cast<int64_t>(merged.size()) % tokens != 0)
        return Status::internal("image ", j, ": the tower gave ", merged.size(), " values for ", tokens, " tokens");
      rows = std::make_shared<const std::vector<float>>(std::move(merged));
      image_rows_[image.content_hash] = rows;
    }
    r.images.rows[j] = std::move(rows);
    image.pixel_values.reset();  // the rows replace them for the request's lifetime
  }
  return {};
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
  if (options_.drafter) options_.drafter->forget(r.id);  // its cache goes; it restarts from the prefix cache
  log::debug("engine: request ", r.id, " preempted (KV blocks ran out) after ", r.computed_at_preemption,
             " tokens; it restarts from the cache");
  if (!cache_.prefix_caching()) return;
  // What it computed stays cache: a prefill stopped on the grid is a snapshot like any prompt's; a
  // decoding request's state is a rule-4 snapshot, and it looks itself up again with what it generated.
  const int64_t computed = r.computed_at_preemption;
  if (computed < r.prompt_len) {
    cache_.cache_prefix(r.cache, r.prompt(), r.prefix_keys, computed, computed > 0 && computed % kSnapshotGrid == 0);
  } else {
    r.prefix_keys = cache_.prefix_keys(r.tokens, r.images.keyed_contents());  // cover the generated tokens once, for both uses
    cache_.cache_generation(r.cache, r.tokens, r.prefix_keys, computed);
  }
}

void Engine::finish(Request& request, FinishReason reason, std::optional<int32_t> stop_token, std::string error) {
  if (options_.drafter) options_.drafter->forget(request.id);
  // Rule 4: a client may send prompt + completion back; it continues from where this one stopped.
  // Cached before the stream ends, so the prefix observer has announced it by the time the client
  // has its answer (a router that sends the next turn at once can already route it here).
  if (reason == FinishReason::stop || reason == FinishReason::length)
    cache_.cache_generation(request.cache, request.tokens, request.prefix_keys, request.num_computed);
  request.stream->finish(reason, stop_token, std::move(error));
  cache_.release(request.cache);
  scheduler_.remove(&request);
  gauges_.finished.fetch_add(1);
  auto it = std::find_if(requests_.begin(), requests_.end(), [&](const auto& r) { return r.get() == &request; });
  DS_CHECK(it != requests_.end(), "finishing an unknown request ", request.id);
  requests_.erase(it);
  if (!image_rows_.empty()) std::erase_if(image_rows_, [](const auto& entry) { return entry.second.expired(); });
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
