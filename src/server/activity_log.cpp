#include "server/activity_log.h"

#include "util/human.h"
#include "util/log.h"

namespace ds::server {
namespace {
double share(int64_t part, int64_t whole) { return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0; }
}  // namespace

bool log_activity(const EngineCounters& before, const EngineCounters& now, double seconds) {
  const int64_t prompt = now.prompt_tokens - before.prompt_tokens;
  const int64_t generated = now.generation_tokens - before.generation_tokens;
  const int64_t queries = now.prefix_queries - before.prefix_queries, hits = now.prefix_hits - before.prefix_hits;
  if (prompt == 0 && generated == 0 && now.running == 0 && now.waiting == 0) return false;
  const double prompt_rate = static_cast<double>(prompt) / seconds, generation_rate = static_cast<double>(generated) / seconds;
  const double prefilled_rate = static_cast<double>(prompt - hits) / seconds;
  const double kv = share(now.blocks_used, now.num_blocks);
  std::string text = str_cat("engine: prompt ", fixed_decimals(prompt_rate, 1), " tok/s (", fixed_decimals(prefilled_rate, 1),
                             " prefilled), generation ", fixed_decimals(generation_rate, 1), " tok/s; running ", now.running,
                             ", waiting ", now.waiting, "; KV ", fixed_decimals(kv, 1), "% of ", now.num_blocks, " blocks");
  if (now.snapshot_capacity > 0)
    text += str_cat("; prefix cache hit ", queries > 0 ? fixed_decimals(share(hits, queries), 1) + "%" : std::string("-"),
                    ", snapshots ", now.snapshots, "/", now.snapshot_capacity, " (", human_bytes(now.snapshot_bytes), ")");
  if (now.preemptions > before.preemptions) text += str_cat("; ", now.preemptions - before.preemptions, " preempted");
  log::event(log::Level::info, "engine", text,
             {{"interval_s", seconds},
              {"prompt_tokens_per_s", prompt_rate},
              {"prefilled_tokens_per_s", prefilled_rate},
              {"generation_tokens_per_s", generation_rate},
              {"running", now.running},
              {"waiting", now.waiting},
              {"kv_blocks_used", now.blocks_used},
              {"kv_blocks", now.num_blocks},
              {"prefix_cache_queries", queries},
              {"prefix_cache_hits", hits},
              {"snapshots", now.snapshots},
              {"snapshot_capacity", now.snapshot_capacity},
              {"snapshot_bytes", static_cast<int64_t>(now.snapshot_bytes)},
              {"preemptions", now.preemptions - before.preemptions}});
  return true;
}

ActivityLog::ActivityLog(const Engine& engine, std::chrono::milliseconds interval)
    : engine_(engine), interval_(interval), thread_([this] { loop(); }) {}

ActivityLog::~ActivityLog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void ActivityLog::loop() {
  using Clock = std::chrono::steady_clock;
  EngineCounters before = engine_.counters();
  auto since = Clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, interval_, [this] { return stopping_; })) {
    const EngineCounters now = engine_.counters();
    const auto at = Clock::now();
    log_activity(before, now, std::chrono::duration<double>(at - since).count());
    before = now;
    since = at;
  }
}

}  // namespace ds::server
